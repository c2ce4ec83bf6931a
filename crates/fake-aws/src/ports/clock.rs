//! [`Clock`] on the fake: the fake time, which a run's sleeps move at once (each recorded, for
//! the tests that check a run's waits).

use std::time::Instant;

use chrono::Duration;
use ddb_rollover::control::Clock;

use crate::account::FakeAws;

impl Clock for FakeAws {
    fn now(&self) -> Instant {
        let world = self.lock();
        let (time, instant) = world.epoch;
        instant + (world.now - time).to_std().unwrap_or_default()
    }

    async fn sleep(&self, duration: std::time::Duration) {
        self.record_wait(duration);
        self.advance(Duration::from_std(duration).unwrap_or(Duration::zero()));
    }
}
