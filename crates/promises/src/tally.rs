//! What the cases exercised, counted by kind (`PROMISES_STATS=1` prints it after the run).

use std::collections::BTreeMap;

/// Every count so far, by kind.
static STATS: std::sync::Mutex<BTreeMap<String, u64>> = std::sync::Mutex::new(BTreeMap::new());

/// Counts one `what`.
pub fn count(what: impl Into<String>) {
    *STATS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .entry(what.into())
        .or_default() += 1;
}

/// What the cases exercised so far, by kind.
pub fn stats() -> BTreeMap<String, u64> {
    STATS.lock().unwrap_or_else(|e| e.into_inner()).clone()
}

/// Prints the tally when `PROMISES_STATS` is set.
pub fn print_stats() {
    if std::env::var_os("PROMISES_STATS").is_none() {
        return;
    }
    for (what, n) in STATS.lock().unwrap_or_else(|e| e.into_inner()).iter() {
        eprintln!("{n:>9}  {what}");
    }
}
