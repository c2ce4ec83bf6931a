//! DynamoDB's per-account rates of the tag calls ([`aws_model::rates::AWS_RATES`]) on the fake
//! clock, once a test turns them on ([`FakeAws::aws_rates`]): a request that finds its
//! operation's bucket empty is throttled. AWS's throttle would meet the SDK's retries; through
//! a port it fails the call, so a run that fails nothing under these rates stayed inside them.

use aws_model::rates::{Bucket, AWS_RATES};
use ddb_rollover::control::{Clock, ControlPlaneError, ErrorKind};

use crate::account::Rates;
use crate::errors::error;
use crate::FakeAws;

impl FakeAws {
    /// Limits the tag calls of the whole account to AWS's per-account rates, each a bucket of
    /// one second's worth, full now, refilled at the rate in fake time.
    pub fn aws_rates(&self) {
        let now = self.now_instant();
        let mut rates = self.rates();
        for (operation, per_second) in AWS_RATES {
            rates.insert(operation, Bucket::new(per_second, now));
        }
    }

    /// A request of `operation` now: throttled when its bucket is empty.
    pub(crate) fn within_rate(&self, operation: &'static str, table: &str) -> Result<(), ControlPlaneError> {
        let now = self.now_instant();
        let throttled = self
            .rates()
            .get_mut(operation)
            .is_some_and(|bucket| !bucket.take(now));
        if throttled {
            return Err(error(
                ErrorKind::Other,
                operation,
                table,
                "ThrottlingException: Rate of requests exceeds the allowed throughput",
            ));
        }
        Ok(())
    }

    fn now_instant(&self) -> std::time::Instant {
        Clock::now(self)
    }

    fn rates(&self) -> std::sync::MutexGuard<'_, Rates> {
        self.rates.lock().unwrap_or_else(|e| e.into_inner())
    }
}
