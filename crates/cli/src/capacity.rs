//! `ddb-rollover capacity`: turns the flags into one of the core's three sizing questions and
//! prints the answer, as an aligned table or JSON. Pure: it needs no policy and no AWS client.

use ddb_rollover_app::capacity::{
    self, BulkLoad, CapacityError, TableSizing, Throughput, WriteLoad, PARTITION_READ_UNITS,
    PARTITION_WRITE_UNITS, WRITE_UNIT_BYTES,
};
use serde::Serialize;

use crate::args::{CapacityArgs, Output};
use crate::render::aligned;

/// What the flags ask; clap has already refused mixed or missing modes.
enum Question {
    Steady(WriteLoad),
    Bulk(BulkLoad),
    Partitions(Throughput),
}

/// JSON output: the inputs echoed, then the answer's own keys.
#[derive(Serialize)]
struct Answer<'a, I: Serialize, R: Serialize> {
    input: &'a I,
    #[serde(flatten)]
    result: R,
}

#[derive(Serialize)]
struct PartitionCount {
    partitions: u64,
}

/// The text to print for the flags, or why they cannot be sized.
pub(crate) fn report(args: &CapacityArgs, output: Output) -> Result<String, CapacityError> {
    Ok(match (question(args), output) {
        (Question::Steady(load), Output::Json) => json(&load, capacity::size_write_load(&load)?),
        (Question::Steady(load), Output::Table) => {
            let sizing = capacity::size_write_load(&load)?;
            let peak = load.peak_events_per_sec.unwrap_or(load.events_per_sec);
            let heading = format!(
                "{} events/s on average, {} at peak, of {}-byte items",
                rate(load.events_per_sec),
                rate(peak),
                grouped(load.item_bytes)
            );
            sizing_table(&heading, &sizing)
        }
        (Question::Bulk(load), Output::Json) => json(&load, capacity::size_bulk_load(&load)?),
        (Question::Bulk(load), Output::Table) => {
            let sizing = capacity::size_bulk_load(&load)?;
            let heading = format!(
                "{} items of {} bytes within {}: {} events/s",
                grouped(load.items),
                grouped(load.item_bytes),
                duration(load.within.as_secs()),
                rate(load.events_per_sec())
            );
            sizing_table(&heading, &sizing)
        }
        (Question::Partitions(throughput), Output::Json) => json(
            &throughput,
            PartitionCount {
                partitions: capacity::partitions_for(throughput)?,
            },
        ),
        (Question::Partitions(throughput), Output::Table) => {
            let partitions = capacity::partitions_for(throughput)?;
            aligned(
                [
                    row(
                        "read capacity",
                        format!("{} RCU", grouped(throughput.read_units)),
                        "",
                    ),
                    row(
                        "write capacity",
                        format!("{} WCU", grouped(throughput.write_units)),
                        "",
                    ),
                    row(
                        "partitions",
                        grouped(partitions),
                        &format!(
                            "ceil(RCU / {} + WCU / {}), at least 1",
                            grouped(PARTITION_READ_UNITS),
                            grouped(PARTITION_WRITE_UNITS)
                        ),
                    ),
                ]
                .iter(),
            )
        }
    })
}

fn question(args: &CapacityArgs) -> Question {
    let item_bytes = args.item_bytes.unwrap_or_default();
    match (args.events_per_sec, args.items, args.within) {
        (Some(events_per_sec), _, _) => Question::Steady(WriteLoad {
            item_bytes,
            events_per_sec,
            peak_events_per_sec: args.peak_events_per_sec,
        }),
        (None, Some(items), Some(within)) => Question::Bulk(BulkLoad {
            item_bytes,
            items,
            within,
        }),
        _ => Question::Partitions(Throughput {
            read_units: args.read_units.unwrap_or_default(),
            write_units: args.write_units.unwrap_or_default(),
        }),
    }
}

fn json<I: Serialize, R: Serialize>(input: &I, result: R) -> String {
    let answer = Answer { input, result };
    format!(
        "{}\n",
        serde_json::to_string_pretty(&answer).expect("serializable")
    )
}

fn sizing_table(heading: &str, sizing: &TableSizing) -> String {
    let rows = [
        row(
            "hours to fill one 10 GB partition",
            hours(sizing.hours_to_fill_partition),
            "at the average rate; each table's period must end sooner",
        ),
        row(
            "period",
            sizing.period.to_string(),
            "the longest period whose table fits in one partition",
        ),
        row(
            "write units per item",
            format!("{} WCU", sizing.write_units_per_item),
            &format!("one per started KB ({} bytes)", grouped(WRITE_UNIT_BYTES)),
        ),
        row(
            "shards",
            grouped(sizing.shards),
            &format!(
                "peak WCU / {} WCU a partition, rounded up",
                grouped(PARTITION_WRITE_UNITS)
            ),
        ),
        row(
            "write capacity",
            format!("{} WCU", grouped(sizing.write_capacity)),
            "peak events/s x WCU per item, rounded up",
        ),
        row(
            "partitions",
            grouped(sizing.partitions),
            &format!(
                "ceil(WCU / {}) for the table being written",
                grouped(PARTITION_WRITE_UNITS)
            ),
        ),
    ];
    let mut text = format!("{heading}\n{}", aligned(rows.iter()));
    for warning in &sizing.warnings {
        text.push_str(&format!("warning: {warning}\n"));
    }
    text
}

fn row(label: &str, value: String, why: &str) -> Vec<String> {
    vec![label.to_string(), value, why.to_string()]
}

/// `1234567` as `1,234,567`.
fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

/// Seconds in the largest unit that divides them: 1800 as `30m`.
fn duration(seconds: u64) -> String {
    for (unit, size) in [("d", 86_400), ("h", 3_600), ("m", 60)] {
        if seconds >= size && seconds % size == 0 {
            return format!("{}{unit}", seconds / size);
        }
    }
    format!("{seconds}s")
}

/// A rate as an operator reads it: grouped, one decimal unless whole, three below 1, and
/// scientific notation below 0.001.
fn rate(value: f64) -> String {
    if value < 0.001 {
        format!("{value:e}")
    } else if value < 1.0 {
        let text = format!("{value:.3}");
        text.trim_end_matches('0').to_string()
    } else {
        one_decimal(value).trim_end_matches(".0").to_string()
    }
}

/// Hours to one decimal; a partition filling within six minutes reads `< 0.1`.
fn hours(value: f64) -> String {
    if value < 0.05 {
        "< 0.1".to_string()
    } else {
        one_decimal(value)
    }
}

/// `1234.56` as `1,234.6`; beyond what an integer holds, scientific notation.
fn one_decimal(value: f64) -> String {
    if !(0.0..1e15).contains(&value) {
        return format!("{value:e}");
    }
    let tenths = (value * 10.0).round() as u64;
    format!("{}.{}", grouped(tenths / 10), tenths % 10)
}
