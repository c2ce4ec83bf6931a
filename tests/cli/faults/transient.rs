//! Transient faults: one Drop, Reset, 500, 503, throttle or 200 ms of latency on each operation of a day cycle, absorbed by the SDK's retries with the clean cycle's report and end state.

use super::*;

const CYCLE_POLICY: &str = r#"
[template]
tags = { team = "iot" }

[retention]
delete_after = 2
keep_newest = 2
"#;

/// The operations a day cycle sends (checked against the clean reference cycle).
const CYCLE_OPERATIONS: [&str; 7] = [
    "ListTables",
    "DescribeTable",
    "ListTagsOfResource",
    "CreateTable",
    "TagResource",
    "UpdateTable",
    "DeleteTable",
];

/// A report line with the table replaced by its age: cycles on different days compare.
fn by_age(report: &Value) -> Vec<(i64, String, String)> {
    let mut out: Vec<(i64, String, String)> = report["tables"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            (
                l["age"].as_i64().unwrap_or_else(|| panic!("no age: {l:#}")),
                l["decision"]["action"].as_str().unwrap().to_owned(),
                l["outcome"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    out.sort();
    out
}

/// What a clean cycle sends and reports, for comparing faulty cycles with.
struct Reference {
    /// Calls per operation, for create_new and resize_old.
    counts: [BTreeMap<String, usize>; 2],
    /// Report lines by age, for create_new and resize_old.
    reports: [Vec<(i64, String, String)>; 2],
    policy_hash: String,
}

struct Cycles {
    rig: Rig,
    policy: PolicyFile,
    start: NaiveDate,
    next: i64,
    reference: Option<Reference>,
}

impl Cycles {
    async fn start() -> Cycles {
        let mut cycles = Cycles {
            rig: Rig::start().await,
            policy: policy_file("cycle", CYCLE_POLICY),
            start: NaiveDate::from_ymd_opt(2018, 3, 1).unwrap(),
            next: 0,
            reference: None,
        };
        // Day 0 creates the first two tables; day 1 is the first full cycle, the reference.
        cycles.cycle(None).await;
        cycles.cycle(None).await;
        cycles
    }

    /// The state a clean run leaves after the cycle of day `d`: `d` warm, `d + 1` hot (the
    /// current period at 00:15), everything older deleted; every table fully tagged.
    fn expected(&self, d: NaiveDate, hash: &str) -> BTreeMap<String, TableState> {
        [(d, WARM), (day(d, 1), HOT)]
            .into_iter()
            .map(|(date, capacity)| {
                let tags = BTreeMap::from([
                    ("team".to_owned(), "iot".to_owned()),
                    (FAMILY.to_owned(), "timeseries".to_owned()),
                    (PERIOD_START.to_owned(), format!("{date}T00:00:00+00:00")),
                    (PERIOD_END.to_owned(), format!("{}T00:00:00+00:00", day(date, 1))),
                    (POLICY_HASH.to_owned(), hash.to_owned()),
                ]);
                (format!("timeseries_{date}"), TableState { capacity, tags })
            })
            .collect()
    }

    /// One day: someone strips the template tag from the current table; create_new at 23:45
    /// (which puts it back and pre-builds tomorrow's table), resize_old at 00:15 the next day
    /// (yesterday's table warm, the day before's deleted). `fault`, when given, is armed once
    /// for `operation` before each of the two runs.
    async fn cycle(&mut self, fault: Option<(&str, Fault)>) {
        let d = day(self.start, self.next);
        self.next += 1;
        let current = format!("timeseries_{d}");
        if self.next > 1 {
            self.rig.untag(&current, "team").await;
        }
        let label = match &fault {
            Some((op, f)) => format!("{} on {op}", f.label()),
            None => "no fault".to_owned(),
        };
        let runs = [
            ("create-new", format!("{d}T23:45:00Z")),
            ("resize-old", format!("{}T00:15:00Z", day(d, 1))),
        ];
        let mut counts: Vec<BTreeMap<String, usize>> = Vec::new();
        let mut reports = Vec::new();
        let mut applied = Vec::new();
        for (command, at) in &runs {
            self.rig.proxy.reset_calls();
            if let Some((op, f)) = &fault {
                self.rig.proxy.clear();
                self.rig.proxy.add(Rule::op(op), f.clone());
            }
            let started = Instant::now();
            let run = self.rig.cli(&common::scheduled(&self.policy, at, command));
            let report = expect_exit(&run, 0, &format!("{command} at {at} with {label}"));
            assert_no_debug_dump(&run.stderr);
            assert_eq!(report["summary"]["failed"], 0, "{label}: {report:#}");
            assert_eq!(report["summary"]["deferred"], 0, "{label}: {report:#}");
            // A guard against a hang, not a speed goal. After a ThrottlingException the SDK's
            // adaptive retry mode slows the client's whole send rate down for a while, so a
            // throttled run takes longer (about 20 s here).
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "{command} with {label} took {:?}",
                started.elapsed()
            );
            applied.push(fault.as_ref().map_or(0, |(op, _)| self.rig.faulted(op)));
            counts.push(self.rig.counts());
            reports.push(by_age(&report));
        }
        self.rig.proxy.clear();

        let hash = match &self.reference {
            Some(reference) => reference.policy_hash.clone(),
            None => self
                .rig
                .tables("timeseries")
                .await
                .get(&current)
                .and_then(|t| t.tags.get(POLICY_HASH).cloned())
                .expect("the current table carries the policy hash"),
        };
        let state = self.rig.tables("timeseries").await;
        assert_eq!(state, self.expected(d, &hash), "state after day {d} with {label}");

        match (&self.reference, self.next) {
            // Day 0 creates the current table too: not a regular cycle.
            (_, 1) => {}
            (None, _) => {
                let counts: [BTreeMap<String, usize>; 2] = [counts[0].clone(), counts[1].clone()];
                for op in CYCLE_OPERATIONS {
                    assert!(
                        counts.iter().any(|c| c.contains_key(op)),
                        "a clean cycle should send {op}: {counts:?}"
                    );
                }
                self.reference = Some(Reference {
                    counts,
                    reports: [reports[0].clone(), reports[1].clone()],
                    policy_hash: hash,
                });
            }
            (Some(reference), _) => {
                let (op, f) = fault.as_ref().expect("faulty cycles have a fault");
                for run in 0..2 {
                    let sends = reference.counts[run].contains_key(*op);
                    assert_eq!(
                        applied[run],
                        usize::from(sends),
                        "{label}: run {} should meet the fault exactly when it sends {op}",
                        runs[run].0
                    );
                    // A fault that is not forwarded costs one more attempt of its operation.
                    let mut want = reference.counts[run].clone();
                    if sends && !matches!(f, Fault::Latency(_)) {
                        *want.get_mut(*op).unwrap() += 1;
                    }
                    assert_eq!(counts[run], want, "{label}: calls of {}", runs[run].0);
                    assert_eq!(
                        reports[run], reference.reports[run],
                        "{label}: {} reported otherwise than a clean run",
                        runs[run].0
                    );
                }
            }
        }
    }

    async fn attack(&mut self, faults: &[Fault]) {
        self.attack_on(faults, &CYCLE_OPERATIONS).await;
    }

    /// Each of `faults` on each of `operations`, one cycle each.
    async fn attack_on(&mut self, faults: &[Fault], operations: &[&'static str]) {
        for fault in faults {
            for op in operations {
                self.cycle(Some((op, fault.clone()))).await;
            }
        }
    }
}

#[tokio::test]
async fn transient_drops_and_resets_are_absorbed() {
    let mut cycles = Cycles::start().await;
    cycles.attack(&[Fault::Drop, Fault::Reset]).await;
}

#[tokio::test]
async fn transient_500s_and_503s_are_absorbed() {
    let mut cycles = Cycles::start().await;
    cycles.attack(&[Fault::Status(500), Fault::Status(503)]).await;
}

/// [`CYCLE_OPERATIONS`] in groups, one throttling test each: a throttled run waits on the SDK's
/// real backoff (its adaptive retry mode slows the client down for about 20 s), so the groups
/// wait side by side on stacks of their own rather than one after another.
/// ListTables and DescribeTable go alone: both runs of a cycle send them, so each throttles
/// two runs.
const THROTTLED_GROUPS: [&[&str]; 4] = [
    &["ListTables"],
    &["DescribeTable"],
    &["ListTagsOfResource", "TagResource"],
    &["CreateTable", "UpdateTable", "DeleteTable"],
];

#[test]
fn the_throttled_groups_are_every_cycle_operation_once() {
    let mut grouped: Vec<&str> = THROTTLED_GROUPS.concat();
    grouped.sort_unstable();
    let mut all = CYCLE_OPERATIONS.to_vec();
    all.sort_unstable();
    assert_eq!(grouped, all);
}

// Throttling and latency attack separate stacks, so they run side by side: each waits on
// the SDK's real backoff or the proxy's delay, not on the CPU.
#[tokio::test]
async fn transient_throttling_of_the_listing_is_absorbed() {
    let mut cycles = Cycles::start().await;
    cycles.attack_on(&[Fault::Throttle], THROTTLED_GROUPS[0]).await;
}

#[tokio::test]
async fn transient_throttling_of_the_describes_is_absorbed() {
    let mut cycles = Cycles::start().await;
    cycles.attack_on(&[Fault::Throttle], THROTTLED_GROUPS[1]).await;
}

#[tokio::test]
async fn transient_throttling_of_the_tag_calls_is_absorbed() {
    let mut cycles = Cycles::start().await;
    cycles.attack_on(&[Fault::Throttle], THROTTLED_GROUPS[2]).await;
}

#[tokio::test]
async fn transient_throttling_of_the_table_changes_is_absorbed() {
    let mut cycles = Cycles::start().await;
    cycles.attack_on(&[Fault::Throttle], THROTTLED_GROUPS[3]).await;
}

#[tokio::test]
async fn transient_latency_is_absorbed() {
    let mut cycles = Cycles::start().await;
    cycles.attack(&[Fault::Latency(Duration::from_millis(200))]).await;
}
