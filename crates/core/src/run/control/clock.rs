//! The clock port: a run's waits and time budget are measured on the control plane's clock,
//! so an in-memory control plane can move its own time and tests never wait on the wall clock.

use std::future::Future;
use std::time::{Duration, Instant};

/// Where a run reads the time and waits between polls. The defaults are the wall clock.
pub trait Clock: Sync {
    /// The clock a run's waits and time budget are measured on: the wall clock, or an
    /// in-memory control plane's own (which [`Self::sleep`] moves), so tests never wait on
    /// the wall clock.
    fn now(&self) -> Instant {
        Instant::now()
    }

    /// Waits between two polls of a table (a create_new run waiting for the tables it created,
    /// or for a deleted one to be gone). A real control plane sleeps; an in-memory one moves
    /// its own clock instead.
    fn sleep(&self, duration: Duration) -> impl Future<Output = ()> + Send {
        futures_timer::Delay::new(duration)
    }
}
