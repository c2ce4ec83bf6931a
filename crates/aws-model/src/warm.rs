//! Warm throughput as AWS treats a raise ("Understanding DynamoDB warm throughput": "Once
//! increased, warm throughput values can't be decreased"): an UpdateTable whose
//! `WarmThroughput` asks less than a part (the table or a global index) has on either
//! dimension is a ValidationException ([`lowered`]). fake-aws refuses its UpdateTable with it
//! and testkit's proxy moto's, which takes a lower value.

/// What the ValidationException for a lower warm throughput ends with, so the harness can tell
/// an attempt to lower one from any other refusal.
pub const LOWER_WARM: &str = "warm throughput cannot be decreased";

/// A warm throughput: units per second on each dimension.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Units {
    /// `ReadUnitsPerSecond`.
    pub read: i64,
    /// `WriteUnitsPerSecond`.
    pub write: i64,
}

/// The part of a table a warm throughput belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Part<'a> {
    /// The table itself.
    Table,
    /// The global secondary index of this name.
    Index(&'a str),
}

/// AWS's refusal (the ValidationException's message) when a raise of `part` to `want` lowers
/// what it `has` on either dimension; `None` when it lowers neither.
pub fn lowered(part: Part<'_>, want: Units, has: Units) -> Option<String> {
    let part = match part {
        Part::Table => "table".to_owned(),
        Part::Index(name) => format!("index {name}"),
    };
    [
        ("ReadUnitsPerSecond", want.read, has.read),
        ("WriteUnitsPerSecond", want.write, has.write),
    ]
    .into_iter()
    .find(|(_, want, has)| want < has)
    .map(|(dimension, want, has)| {
        format!(
            "One or more parameter values were invalid: Requested {dimension} for WarmThroughput for {part} is lower than the current value ({want} < {has}): {LOWER_WARM}"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const HAS: Units = Units {
        read: 40_000,
        write: 20_000,
    };

    #[test]
    fn a_raise_may_keep_or_raise_each_dimension_never_lower_one() {
        assert_eq!(lowered(Part::Table, HAS, HAS), None);
        let more = Units {
            read: 50_000,
            write: 20_000,
        };
        assert_eq!(lowered(Part::Index("i"), more, HAS), None);
        let lower_read = Units {
            read: 30_000,
            write: 30_000,
        };
        let why = lowered(Part::Table, lower_read, HAS).unwrap();
        assert!(
            why.contains("ReadUnitsPerSecond for WarmThroughput for table"),
            "{why}"
        );
        assert!(why.ends_with(LOWER_WARM), "{why}");
        let lower_write = Units {
            read: 40_000,
            write: 19_999,
        };
        let why = lowered(Part::Index("by_device"), lower_write, HAS).unwrap();
        assert!(
            why.contains("WriteUnitsPerSecond for WarmThroughput for index by_device"),
            "{why}"
        );
    }
}
