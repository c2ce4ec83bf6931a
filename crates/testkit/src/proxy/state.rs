//! The proxy's bookkeeping, shared by the test and the proxy's thread: the rules in place with
//! their progress, the rate limits' token buckets, the table quota, the per-call latency, the
//! behaviours turned on, and the record of calls. [`State::decide_with`] is where a request's
//! fault is picked.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

pub(super) use aws_model::rates::Bucket;

use super::kinesis_state::Destinations;
use super::rules::{Call, Fault, Rule};

/// Rules, rate limits, the quota, the latency and the record, shared by the test and the
/// proxy thread.
#[derive(Debug, Default)]
pub(super) struct State {
    pub(super) rules: Vec<Armed>,
    pub(super) limits: HashMap<String, Bucket>,
    pub(super) quota: Option<TableQuota>,
    pub(super) latency: Duration,
    /// Apply a successful CreateTable's `Tags` with TagResource before answering.
    pub(super) tags_at_create_table: bool,
    /// Add the table's current attribute definitions to an UpdateTable's before forwarding it.
    pub(super) attribute_definitions_at_update_table: bool,
    /// Delete the policies of a target a DeregisterScalableTarget removed before answering.
    pub(super) deregister_deletes_policies: bool,
    /// Lay out COMPLETED exports as AWS does ([`super::Proxy::export_layout`]).
    pub(super) export_layout: bool,
    /// The exports laid out so far: ARN to their folder in S3.
    pub(super) exports: HashMap<String, String>,
    /// When the proxy first saw each export (milliseconds since the epoch): its `ExportTime`
    /// and its summary's `exportTime`, which moto leaves out and AWS gives (the request's time
    /// when it names none).
    pub(super) export_times: HashMap<String, i64>,
    /// The family whose IAM role the proxy enforces ([`super::Proxy::family_role`]).
    pub(super) role: Option<String>,
    /// Refuse an UpdateTable that lowers a warm throughput ([`super::Proxy::warm_never_lowered`]).
    pub(super) warm_never_lowered: bool,
    /// Report warm throughput UPDATING in this many DescribeTable answers per table
    /// ([`super::Proxy::warm_updating_answers`]), and the answers given so far by table.
    pub(super) warm_updating: Option<usize>,
    pub(super) warm_answers: HashMap<String, usize>,
    /// Refuse item writes a table's resource-based policy denies
    /// ([`super::Proxy::resource_policies_enforced`]).
    pub(super) resource_policies_enforced: bool,
    /// The tables' Kinesis Data Streams destinations, when modelled
    /// ([`super::Proxy::kinesis_destinations`]).
    pub(super) kinesis_destinations: Option<Destinations>,
    /// Answer S3 reads as AWS does: the expected bucket owner checked, lifecycle expirations
    /// said ([`super::Proxy::s3_as_aws`]).
    pub(super) s3_as_aws: bool,
    /// Buckets a test gave to another account ([`super::Proxy::bucket_owner`]); any other is
    /// moto's account's.
    pub(super) bucket_owners: HashMap<String, String>,
    /// Record nothing in `calls` (a proxy nobody asks what it saw).
    pub(super) unrecorded: bool,
    pub(super) calls: Vec<Call>,
    pub(super) connections: usize,
}

/// The account's table quota and the proxy's count of the upstream's tables.
#[derive(Debug)]
pub(super) struct TableQuota {
    pub(super) limit: usize,
    /// Tables on the upstream; `None` until counted.
    pub(super) tables: Option<usize>,
    /// CreateTable calls forwarded and not yet answered: each holds a place under the quota.
    pub(super) creating: usize,
}

/// What the proxy does with one request.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct Verdict {
    pub(super) fault: Option<Fault>,
    /// A CreateTable that holds a place under the quota until its reply: give it back with
    /// [`State::created`].
    pub(super) reserved: bool,
    /// Added before forwarding ([`super::Proxy::latency_per_call`]).
    pub(super) latency: Duration,
}

impl State {
    /// Records the request and decides its fault: the first rule whose turn it is, else the
    /// operation's rate limit, else (CreateTable) the table quota.
    #[cfg(test)]
    pub(super) fn decide(&mut self, operation: &str, table: Option<&str>, now: Instant) -> Verdict {
        self.decide_with(operation, table, now, None)
    }

    /// [`State::decide`] for a request the role refuses (`denied`: why) unless a rule faults
    /// it first.
    pub(super) fn decide_with(
        &mut self,
        operation: &str,
        table: Option<&str>,
        now: Instant,
        denied: Option<String>,
    ) -> Verdict {
        let mut fault = None;
        for armed in self.rules.iter_mut() {
            if !armed.rule.matches(operation, table) || armed.applied >= armed.rule.times {
                continue;
            }
            if armed.skipped < armed.rule.skip {
                armed.skipped += 1;
            } else if fault.is_none() {
                armed.applied += 1;
                fault = Some(armed.fault.clone());
            }
        }
        if let (None, Some(message)) = (&fault, denied) {
            fault = Some(Fault::Error {
                status: 400,
                error_type: "AccessDeniedException".to_owned(),
                message,
            });
        }
        if fault.as_ref().is_none_or(Fault::forwards) {
            if let Some(bucket) = self.limits.get_mut(operation) {
                if !bucket.take(now) {
                    fault = Some(Fault::Throttle);
                }
            }
        }
        let mut reserved = false;
        if operation == "CreateTable" && fault.as_ref().is_none_or(Fault::forwards) {
            if let Some(quota) = self.quota.as_mut() {
                // Not counted (the upstream could not be listed): nothing to hold against.
                let used = quota.tables.map(|tables| tables + quota.creating);
                if used.is_some_and(|used| used >= quota.limit) {
                    fault = Some(Fault::TableQuota(quota.limit));
                } else {
                    quota.creating += 1;
                    reserved = true;
                }
            }
        }
        if !self.unrecorded {
            self.calls.push(Call {
                operation: operation.to_owned(),
                table: table.map(str::to_owned),
                fault: fault.as_ref().map(Fault::label),
            });
        }
        let forwarded = fault.as_ref().is_none_or(Fault::forwards);
        Verdict {
            fault,
            reserved,
            latency: if forwarded { self.latency } else { Duration::ZERO },
        }
    }

    /// A reserved CreateTable was answered: the table now counts if it was created.
    pub(super) fn created(&mut self, success: bool) {
        if let Some(quota) = self.quota.as_mut() {
            quota.creating = quota.creating.saturating_sub(1);
            if success {
                quota.tables = quota.tables.map(|t| t + 1);
            }
        }
    }

    /// A DeleteTable succeeded on the upstream.
    pub(super) fn deleted(&mut self) {
        if let Some(quota) = self.quota.as_mut() {
            quota.tables = quota.tables.map(|t| t.saturating_sub(1));
        }
    }

    /// `table` was deleted on the upstream: it no longer counts, and its Kinesis destinations
    /// go with it.
    pub(super) fn table_deleted(&mut self, table: &str) {
        self.deleted();
        if let Some(destinations) = self.kinesis_destinations.as_mut() {
            destinations.table_deleted(table);
        }
    }

    /// Whether the quota is set and its count is still to be made.
    pub(super) fn needs_count(&self) -> bool {
        self.quota.as_ref().is_some_and(|q| q.tables.is_none())
    }
}

/// A rule with its progress.
#[derive(Debug)]
pub(super) struct Armed {
    pub(super) rule: Rule,
    pub(super) fault: Fault,
    pub(super) skipped: usize,
    pub(super) applied: usize,
}

pub(super) fn lock(state: &Mutex<State>) -> MutexGuard<'_, State> {
    state.lock().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state_with(rules: Vec<(Rule, Fault)>) -> State {
        State {
            rules: rules
                .into_iter()
                .map(|(rule, fault)| Armed {
                    rule,
                    fault,
                    skipped: 0,
                    applied: 0,
                })
                .collect(),
            ..State::default()
        }
    }

    #[test]
    fn rules_skip_then_fault_then_are_spent() {
        let now = Instant::now();
        let mut state = state_with(vec![
            (Rule::op("DescribeTable").skip(1).times(2), Fault::Drop),
            (Rule::any().on_table("b"), Fault::Status(500)),
        ]);
        let faults: Vec<Option<Fault>> = [
            ("DescribeTable", "a"),
            ("ListTables", "a"),
            ("DescribeTable", "a"),
            ("DescribeTable", "b"),
            ("DescribeTable", "b"),
            ("DescribeTable", "a"),
        ]
        .iter()
        .map(|(op, table)| state.decide(op, Some(table), now).fault)
        .collect();
        assert_eq!(
            faults,
            [
                None,
                None,
                Some(Fault::Drop),
                Some(Fault::Drop),
                Some(Fault::Status(500)),
                None
            ]
        );
        let labels: Vec<Option<&str>> = state.calls.iter().map(|c| c.fault.as_deref()).collect();
        assert_eq!(
            labels,
            [None, None, Some("drop"), Some("drop"), Some("status 500"), None]
        );
    }

    #[test]
    fn a_skipping_rule_counts_requests_an_earlier_rule_took() {
        let now = Instant::now();
        let mut state = state_with(vec![
            (Rule::op("CreateTable"), Fault::Reset),
            (Rule::op("CreateTable").skip(1), Fault::Throttle),
        ]);
        assert_eq!(state.decide("CreateTable", None, now).fault, Some(Fault::Reset));
        assert_eq!(
            state.decide("CreateTable", None, now).fault,
            Some(Fault::Throttle)
        );
        assert_eq!(state.decide("CreateTable", None, now).fault, None);
    }

    #[test]
    fn rate_limit_applies_to_requests_no_rule_failed() {
        let now = Instant::now();
        let mut state = state_with(vec![(Rule::op("TagResource"), Fault::Status(503))]);
        state.limits.insert("TagResource".into(), Bucket::new(1, now));
        assert_eq!(
            state.decide("TagResource", None, now).fault,
            Some(Fault::Status(503))
        );
        assert_eq!(state.decide("TagResource", None, now).fault, None);
        assert_eq!(
            state.decide("TagResource", None, now).fault,
            Some(Fault::Throttle)
        );
        assert_eq!(state.decide("UntagResource", None, now).fault, None);
        assert_eq!(state.calls[2].fault.as_deref(), Some("throttle"));
    }

    fn with_quota(limit: usize, tables: Option<usize>) -> State {
        State {
            quota: Some(TableQuota {
                limit,
                tables,
                creating: 0,
            }),
            ..State::default()
        }
    }

    #[test]
    fn quota_counts_tables_and_creates_in_flight() {
        let now = Instant::now();
        let mut state = with_quota(3, Some(1));
        let first = state.decide("CreateTable", Some("a"), now);
        assert_eq!((first.fault.clone(), first.reserved), (None, true));
        let second = state.decide("CreateTable", Some("b"), now);
        assert!(second.reserved);
        // 1 table and 2 creates in flight: the quota of 3 is used up.
        let refused = state.decide("CreateTable", Some("c"), now);
        assert_eq!(
            (refused.fault, refused.reserved),
            (Some(Fault::TableQuota(3)), false)
        );
        // One create failed upstream (e.g. the name was taken): its place is free again.
        state.created(false);
        assert_eq!(state.decide("CreateTable", Some("c"), now).fault, None);
        state.created(true);
        state.created(true);
        assert_eq!(state.quota.as_ref().unwrap().tables, Some(3));
        assert_eq!(
            state.decide("CreateTable", Some("d"), now).fault,
            Some(Fault::TableQuota(3))
        );
        // Other operations are never refused for the quota.
        assert_eq!(state.decide("DescribeTable", Some("d"), now).fault, None);
        state.deleted();
        assert_eq!(state.decide("CreateTable", Some("d"), now).fault, None);
        let labels: Vec<Option<&str>> = state.calls.iter().map(|c| c.fault.as_deref()).collect();
        assert_eq!(
            labels,
            [None, None, Some("quota"), None, Some("quota"), None, None]
        );
    }

    #[test]
    fn quota_not_counted_yet_refuses_nothing() {
        let now = Instant::now();
        let mut state = with_quota(0, None);
        assert!(state.needs_count());
        assert_eq!(state.decide("CreateTable", Some("a"), now).fault, None);
        assert!(!with_quota(0, Some(0)).needs_count());
        assert!(!State::default().needs_count());
    }

    #[test]
    fn a_rule_or_throttle_comes_before_the_quota() {
        let now = Instant::now();
        let mut state = with_quota(0, Some(5));
        state.rules.push(Armed {
            rule: Rule::op("CreateTable"),
            fault: Fault::Status(500),
            skipped: 0,
            applied: 0,
        });
        state.limits.insert("CreateTable".into(), Bucket::new(1, now));
        assert_eq!(
            state.decide("CreateTable", None, now).fault,
            Some(Fault::Status(500))
        );
        assert_eq!(
            state.decide("CreateTable", None, now).fault,
            Some(Fault::TableQuota(0))
        );
        assert_eq!(
            state.decide("CreateTable", None, now).fault,
            Some(Fault::Throttle)
        );
        assert_eq!(state.quota.as_ref().unwrap().creating, 0);
    }

    #[test]
    fn latency_only_for_forwarded_requests() {
        let now = Instant::now();
        let mut state = State {
            latency: Duration::from_millis(20),
            ..State::default()
        };
        state.limits.insert("TagResource".into(), Bucket::new(1, now));
        assert_eq!(
            state.decide("TagResource", None, now).latency,
            Duration::from_millis(20)
        );
        let throttled = state.decide("TagResource", None, now);
        assert_eq!(throttled.fault, Some(Fault::Throttle));
        assert_eq!(throttled.latency, Duration::ZERO);
        // Per-call latency is no fault.
        assert_eq!(state.calls[0].fault, None);
    }
}
