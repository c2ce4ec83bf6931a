//! DynamoDB's per-account rates of the tag calls, and the token bucket AWS meters them with:
//! testkit's proxy throttles the wire with it, fake-aws its ports on the fake clock.

use std::time::Instant;

/// DynamoDB's documented per-account rates, in calls per second, for the control-plane APIs
/// that have one (API Reference: "You can call ListTagsOfResource up to 10 times per second,
/// per account"; TagResource and UntagResource "up to five times per second, per account").
/// DescribeExport and ExportTableToPointInTime document no per-second rate (exports are
/// limited by how many run at once), so they are not limited here.
pub const AWS_RATES: [(&str, u32); 3] = [
    ("ListTagsOfResource", 10),
    ("TagResource", 5),
    ("UntagResource", 5),
];

/// A per-account rate: a bucket of one second's worth of calls, full at first, refilled at
/// the rate; a call finding it empty is throttled.
#[derive(Clone, Debug)]
pub struct Bucket {
    capacity: f64,
    tokens: f64,
    at: Instant,
}

impl Bucket {
    /// A full bucket of `per_second` calls at `now`.
    pub fn new(per_second: u32, now: Instant) -> Bucket {
        Bucket {
            capacity: f64::from(per_second),
            tokens: f64::from(per_second),
            at: now,
        }
    }

    /// Takes a token if there is one.
    pub fn take(&mut self, now: Instant) -> bool {
        let elapsed = now.saturating_duration_since(self.at).as_secs_f64();
        self.tokens = (self.tokens + elapsed * self.capacity).min(self.capacity);
        self.at = self.at.max(now);
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            true
        } else {
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn bucket_allows_a_burst_then_the_rate() {
        let t0 = Instant::now();
        let mut bucket = Bucket::new(5, t0);
        assert_eq!((0..7).filter(|_| bucket.take(t0)).count(), 5);
        assert!(!bucket.take(t0 + Duration::from_millis(100)));
        assert!(bucket.take(t0 + Duration::from_millis(200)));
        assert!(!bucket.take(t0 + Duration::from_millis(210)));
        // A long pause refills only up to the burst.
        let later = t0 + Duration::from_secs(10);
        assert_eq!((0..7).filter(|_| bucket.take(later)).count(), 5);
    }
}
