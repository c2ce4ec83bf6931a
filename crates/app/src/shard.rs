//! Write sharding (DynamoDB guide, "Using write sharding to distribute workloads evenly"):
//! one logical partition key `base` is spread over `N` physical keys `{base}{sep}{n}`,
//! `n` in `1..=N`, so one hot key can take `N` times the 1,000 WCU a partition serves.
//!
//! The shard is either random (even spread; readers query every shard) or calculated from an
//! item attribute, so a reader who knows the attribute goes straight to one shard. The
//! calculated shard is platform-stable and easy to reproduce in any language:
//!
//! ```text
//! n = (first 8 bytes of SHA-256(UTF-8 bytes of value), as a big-endian u64) mod N + 1
//! ```
//!
//! In Python: `int.from_bytes(hashlib.sha256(value.encode()).digest()[:8], "big") % N + 1`.

use serde::Serialize;
use sha2::{Digest, Sha256};

/// Upper bound for the shard count: a fan-out read issues one Query per shard and period, so
/// thousands of shards make every read that expensive.
pub const MAX_SHARDS: u32 = 1000;

/// The separator when none is given: `SENSOR#123` + `#` + `4`.
pub const DEFAULT_SEPARATOR: &str = "#";

/// Why a sharding or a shard number is not valid.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ShardingError {
    /// A shard count outside 1 to [`MAX_SHARDS`].
    #[error("shards is {0}: use 1 to {MAX_SHARDS}")]
    Count(u32),
    /// A shard number outside 1 to the shard count.
    #[error("shard is {shard}: use 1 to {shards}, the shard count")]
    Shard {
        /// The shard number given.
        shard: u32,
        /// The shard count.
        shards: u32,
    },
    /// An empty separator.
    #[error("separator is empty: use a string such as \"#\" that never ends a base key")]
    EmptySeparator,
}

/// How many shards one base key is spread over, and how shard keys are spelled.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Sharding {
    shards: u32,
    separator: String,
}

/// Which shard a write goes to.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub enum ShardChoice {
    /// A uniformly random shard: the most even spread.
    #[default]
    Random,
    /// The shard calculated from this value (for example a device id), so readers can find it.
    By(String),
    /// This shard (1-based): a write being retried keeps the shard it was first given.
    Fixed(u32),
}

impl Sharding {
    /// `shards` shards, spelled with the default separator `#`.
    pub fn new(shards: u32) -> Result<Sharding, ShardingError> {
        Sharding::with_separator(shards, DEFAULT_SEPARATOR)
    }

    /// `shards` shards, spelled `{base}{separator}{n}`.
    pub fn with_separator(shards: u32, separator: &str) -> Result<Sharding, ShardingError> {
        if !(1..=MAX_SHARDS).contains(&shards) {
            return Err(ShardingError::Count(shards));
        }
        if separator.is_empty() {
            return Err(ShardingError::EmptySeparator);
        }
        Ok(Sharding {
            shards,
            separator: separator.to_string(),
        })
    }

    /// How many shards each base key is spread over.
    pub fn shards(&self) -> u32 {
        self.shards
    }

    /// What goes between the base key and the shard number.
    pub fn separator(&self) -> &str {
        &self.separator
    }

    /// The partition key of shard `n` (1-based) of `base`.
    pub fn key(&self, base: &str, n: u32) -> String {
        debug_assert!((1..=self.shards).contains(&n), "shard {n} of {}", self.shards);
        format!("{base}{}{n}", self.separator)
    }

    /// Every shard key of `base`, shard 1 first: what a reader must query.
    pub fn keys(&self, base: &str) -> Vec<String> {
        (1..=self.shards).map(|n| self.key(base, n)).collect()
    }

    /// The shard a write goes to.
    pub fn choose(&self, choice: &ShardChoice) -> Result<u32, ShardingError> {
        match choice {
            ShardChoice::Random => Ok(fastrand::u32(1..=self.shards)),
            ShardChoice::By(value) => Ok(self.shard_of(value)),
            ShardChoice::Fixed(n) if (1..=self.shards).contains(n) => Ok(*n),
            ShardChoice::Fixed(n) => Err(ShardingError::Shard {
                shard: *n,
                shards: self.shards,
            }),
        }
    }

    /// The calculated shard of `value` (see the module documentation for the formula).
    pub fn shard_of(&self, value: &str) -> u32 {
        let digest = Sha256::digest(value.as_bytes());
        let first8: [u8; 8] = digest[..8].try_into().expect("SHA-256 has 32 bytes");
        let shard = u64::from_be_bytes(first8) % u64::from(self.shards);
        u32::try_from(shard).expect("below the shard count") + 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calculated_shards_match_the_documented_formula() {
        // Expected values from Python's hashlib with the formula in the module docs.
        for (value, expected) in [
            ("sensor-123", [4, 6, 96]),
            ("", [1, 3, 53]),
            ("ü", [1, 9, 29]),
            ("order#42", [4, 2, 12]),
        ] {
            let got: Vec<u32> = [4, 10, 200]
                .iter()
                .map(|&n| Sharding::new(n).unwrap().shard_of(value))
                .collect();
            assert_eq!(got, expected, "{value:?}");
        }
    }

    #[test]
    fn keys_cover_every_shard_once() {
        let sharding = Sharding::with_separator(4, ".").unwrap();
        assert_eq!(
            sharding.keys("SENSOR#1"),
            ["SENSOR#1.1", "SENSOR#1.2", "SENSOR#1.3", "SENSOR#1.4"]
        );
        let one = Sharding::new(1).unwrap();
        assert_eq!(one.keys("x"), ["x#1"]);
        assert_eq!(one.choose(&ShardChoice::Random), Ok(1));
        assert_eq!(sharding.choose(&ShardChoice::Fixed(4)), Ok(4));
        let err = sharding.choose(&ShardChoice::Fixed(5)).unwrap_err();
        assert_eq!(err.to_string(), "shard is 5: use 1 to 4, the shard count");
    }

    #[test]
    fn random_shards_stay_in_range_and_use_them_all() {
        let sharding = Sharding::new(5).unwrap();
        let mut seen = [0u32; 6];
        for _ in 0..5000 {
            let n = sharding.choose(&ShardChoice::Random).unwrap();
            assert!((1..=5).contains(&n));
            seen[n as usize] += 1;
        }
        // Each shard expects 1,000; a fair generator stays far inside 800..1,200.
        assert!(seen[1..].iter().all(|&c| (800..1200).contains(&c)), "{seen:?}");
    }

    #[test]
    fn bad_settings_are_refused() {
        assert_eq!(Sharding::new(0), Err(ShardingError::Count(0)));
        assert_eq!(
            Sharding::new(MAX_SHARDS + 1),
            Err(ShardingError::Count(MAX_SHARDS + 1))
        );
        assert!(Sharding::new(MAX_SHARDS).is_ok());
        let err = Sharding::with_separator(2, "").unwrap_err();
        assert!(err.to_string().starts_with("separator is empty"), "{err}");
    }
}
