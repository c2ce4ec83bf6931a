//! What a hand-written test does through the handle besides the ports: failures and acts
//! injected into our calls ([`crate::injection`] keeps them), and the requests, waits and
//! concurrency it observes ([`crate::log`]'s traffic).

use ddb_rollover::control::{ControlPlaneError, ErrorKind};

use crate::account::FakeAws;
use crate::errors::error;
use crate::injection::{Act, Around, Failure, Injected};
use crate::log::{Request, Traffic};

impl FakeAws {
    fn injected(&self) -> std::sync::MutexGuard<'_, Injected<FakeAws>> {
        self.injected.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Every `operation` on `table` through the ports fails with `kind`, changing nothing (the
    /// message says `injected {kind:?}`).
    pub fn fail(&self, operation: &'static str, table: &str, kind: ErrorKind) {
        self.fail_times(operation, table, kind, usize::MAX);
    }

    /// The next `times` calls of `operation` on `table` fail with `kind`; later ones go through.
    pub fn fail_times(&self, operation: &'static str, table: &str, kind: ErrorKind, times: usize) {
        self.injected().failures.push(Failure {
            operation,
            table: table.to_string(),
            kind,
            left: times,
        });
    }

    /// `act` happens once, `around` our next `operation` on `table` (whether the call succeeds
    /// or not); it acts through the handle it is given, usually with a `foreign_*` method.
    pub fn around(
        &self,
        around: Around,
        operation: &'static str,
        table: &str,
        act: impl FnOnce(&FakeAws) + Send + 'static,
    ) {
        self.injected().acts.push(Act {
            around,
            operation,
            table: table.to_string(),
            act: Box::new(act),
        });
    }

    /// The injected failure this request meets, if any (counting it).
    pub(crate) fn injected_failure(&self, operation: &'static str, table: &str) -> Option<ControlPlaneError> {
        let mut injected = self.injected();
        let failure = injected
            .failures
            .iter_mut()
            .find(|f| f.operation == operation && f.table == table && f.left > 0)?;
        if failure.left != usize::MAX {
            failure.left -= 1;
        }
        let kind = failure.kind;
        Some(error(kind, operation, table, format!("injected {kind:?}")))
    }

    /// Runs (once) the acts injected `around` this call; the caller holds no lock on the world.
    pub(crate) fn act_around(&self, around: Around, operation: &'static str, table: &str) {
        let due: Vec<Act<FakeAws>> = {
            let mut injected = self.injected();
            let (due, waiting) = std::mem::take(&mut injected.acts)
                .into_iter()
                .partition(|a| a.around == around && a.operation == operation && a.table == table);
            injected.acts = waiting;
            due
        };
        for act in due {
            (act.act)(self);
        }
    }
}

impl FakeAws {
    fn traffic(&self) -> std::sync::MutexGuard<'_, Traffic> {
        self.traffic.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Every request made through the ports so far, in order.
    pub fn requests(&self) -> Vec<Request> {
        self.traffic().requests.clone()
    }

    /// The waits a run asked of the clock, in order.
    pub fn waits(&self) -> Vec<std::time::Duration> {
        self.traffic().waits.clone()
    }

    /// The most requests in flight at once so far (see [`Self::hold_requests`]).
    pub fn max_in_flight(&self) -> usize {
        self.traffic().max_in_flight
    }

    /// Each request from now on lets the others in flight run `yields` times before it is
    /// answered (yielding, never sleeping), so a run's concurrency is observable.
    pub fn hold_requests(&self, yields: usize) {
        self.traffic().yields = yields;
    }

    pub(crate) fn record_wait(&self, duration: std::time::Duration) {
        self.traffic().waits.push(duration);
    }

    /// Where every port method starts: the request is recorded, held while the others in flight
    /// run, then refused if a test injected a failure for it ([`Self::fail`]) or throttled
    /// beyond the account's rate ([`Self::aws_rates`]).
    pub(crate) async fn request(
        &self,
        operation: &'static str,
        table: &str,
    ) -> Result<(), ControlPlaneError> {
        let yields = {
            let mut traffic = self.traffic();
            traffic.requests.push(Request {
                operation,
                table: table.to_string(),
            });
            traffic.in_flight += 1;
            traffic.max_in_flight = traffic.max_in_flight.max(traffic.in_flight);
            traffic.yields
        };
        for _ in 0..yields {
            YieldOnce(false).await;
        }
        self.traffic().in_flight -= 1;
        match self.injected_failure(operation, table) {
            Some(error) => Err(error),
            None => self.within_rate(operation, table),
        }
    }
}

/// Pending once (waking itself at once), so the executor polls the other futures in flight.
struct YieldOnce(bool);

impl std::future::Future for YieldOnce {
    type Output = ();

    fn poll(mut self: std::pin::Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> std::task::Poll<()> {
        if self.0 {
            return std::task::Poll::Ready(());
        }
        self.0 = true;
        cx.waker().wake_by_ref();
        std::task::Poll::Pending
    }
}
