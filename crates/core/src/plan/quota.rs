//! The account's table quota, said before it is reached. DynamoDB allows 2,500 tables per
//! Region by default; a policy without `retention.delete_after` keeps one more table every
//! period, and one with it up to `delete_after + premake + 1`. A scheduled run says so only once
//! the family passes the quota within a year (a daily family of 30 tables is 6 years away: not
//! worth a line in every run); `status` and `plan`, where an operator plans, say it whenever
//! the policy can pass it.

use chrono::{DateTime, TimeDelta, Utc};

use crate::policy::limits::DEFAULT_TABLE_QUOTA;
use crate::policy::naming::{Ownership, TableNaming};
use crate::policy::period::PeriodKind;
use crate::policy::Policy;

/// How far ahead a scheduled run looks for the quota.
pub(crate) const RUN_HORIZON: TimeDelta = TimeDelta::days(365);

/// Who asks about the quota.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum QuotaHorizon {
    /// A run (or its preview): only when the family passes the quota within [`RUN_HORIZON`].
    NextYear,
    /// `status` and `plan`: whenever the policy lets the family pass it.
    Ever,
}

/// The tables named as this policy's among `names`: each counts against the account's quota,
/// whoever made it.
pub(crate) fn family_tables<'a>(naming: &TableNaming, names: impl IntoIterator<Item = &'a str>) -> u64 {
    names
        .into_iter()
        .filter(|name| matches!(naming.classify(name), Ownership::Owned(_)))
        .count() as u64
}

/// A warning when the policy lets the family pass DynamoDB's default table quota, holding
/// `tables` now (see [`family_tables`]) and one more each period; `None` when it never does, or
/// (for [`QuotaHorizon::NextYear`]) not within a year of `now`. The text depends only on the
/// policy, `now`'s period and `tables`, so a view that collects several plans' warnings says it once.
pub(crate) fn quota_warning(
    policy: &Policy,
    now: DateTime<Utc>,
    tables: u64,
    horizon: QuotaHorizon,
) -> Option<String> {
    let kept = policy
        .retention
        .as_ref()
        .and_then(|r| r.delete_after)
        .map(|after| u64::from(after) + u64::from(policy.premake) + 1);
    if kept.is_some_and(|kept| kept <= DEFAULT_TABLE_QUOTA) {
        return None;
    }
    // The family holds one table more than the quota `more` periods from now.
    let more = (DEFAULT_TABLE_QUOTA + 1).saturating_sub(tables);
    if horizon == QuotaHorizon::NextYear && more > most_periods_in_a_year(policy.period) {
        return None;
    }
    let calendar = policy.calendar();
    let passes = usize::try_from(more)
        .ok()
        .and_then(|more| calendar.periods_from(calendar.floor(now)).nth(more))
        .filter(|slot| calendar.is_labelled(*slot));
    if horizon == QuotaHorizon::NextYear && passes.is_none_or(|slot| slot.start() > now + RUN_HORIZON) {
        return None;
    }
    let when = match passes {
        _ if more == 0 => format!(
            "this family alone already holds {tables} tables, more than DynamoDB's default quota of \
             {DEFAULT_TABLE_QUOTA} tables per Region"
        ),
        Some(slot) => format!(
            "with the {tables} tables it holds now, this family alone passes DynamoDB's default quota of \
             {DEFAULT_TABLE_QUOTA} tables per Region around {} (in about {more} periods)",
            calendar.label(slot)
        ),
        None => format!(
            "with the {tables} tables it holds now, this family alone passes DynamoDB's default quota of \
             {DEFAULT_TABLE_QUOTA} tables per Region in about {more} periods"
        ),
    };
    Some(match kept {
        None => format!(
            "the policy keeps every table (no retention.delete_after), one a {}: {when} (sooner with the \
             account's other tables), and create_new then fails; set retention.delete_after, or ask AWS \
             for a higher quota in time",
            policy.period
        ),
        Some(kept) => format!(
            "the policy keeps up to {kept} tables (retention.delete_after + premake + the current one): \
             {when} (sooner with the account's other tables), and create_new then fails; lower \
             delete_after, or ask AWS for a higher quota in time"
        ),
    })
}

/// At least as many periods as any 366 days hold (a repeated DST hour adds one label a year):
/// a bound checked before walking the calendar.
fn most_periods_in_a_year(kind: PeriodKind) -> u64 {
    match kind {
        PeriodKind::Hours(n) => 366 * 24 / u64::from(n) + 2,
        PeriodKind::Day => 367,
        PeriodKind::Week => 54,
        PeriodKind::Month => 13,
        PeriodKind::Quarter => 5,
        PeriodKind::Year => 2,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(toml: &str) -> Policy {
        Policy::from_toml(toml).unwrap()
    }

    fn at(s: &str) -> DateTime<Utc> {
        s.parse().unwrap()
    }

    const NOW: &str = "2018-10-25T23:45:00Z";

    #[test]
    fn a_run_says_the_quota_only_within_a_year() {
        let daily = policy("");
        let run = |tables| quota_warning(&daily, at(NOW), tables, QuotaHorizon::NextYear);
        // 2,501 - 2,100 = 401 days away; 2,501 - 2,200 = 301 days away.
        assert_eq!(run(30), None);
        assert_eq!(run(2_100), None);
        let near = run(2_200).expect("within a year");
        assert!(
            near.contains("no retention.delete_after")
                && near.contains("2500 tables per Region")
                && near.contains("around 2019-08-22 (in about 301 periods)"),
            "{near}"
        );
        assert!(run(2_600).unwrap().contains("already holds 2600 tables"));
        // Hourly tables pass it in about 104 days, whatever exists.
        assert!(quota_warning(&policy("period = \"hour\"\n"), at(NOW), 0, QuotaHorizon::NextYear).is_some());
    }

    #[test]
    fn an_operators_view_says_it_whenever_the_policy_can_pass_it() {
        let ever = |toml, tables| quota_warning(&policy(toml), at(NOW), tables, QuotaHorizon::Ever);
        let far = ever("", 30).expect("status and plan always say it");
        assert!(far.contains("around 2025-07-31 (in about 2471 periods)"), "{far}");
        // Yearly tables from the year 8000: the quota is passed after the last labelled year.
        let yearly = quota_warning(
            &policy("period = \"year\"\n"),
            at("8000-06-01T00:00:00Z"),
            3,
            QuotaHorizon::Ever,
        );
        assert!(yearly
            .unwrap()
            .contains("tables per Region in about 2498 periods (sooner"));
        assert_eq!(ever("premake = 1\n[retention]\ndelete_after = 2498\n", 30), None);
        let too_many = ever("premake = 2\n[retention]\ndelete_after = 2498\n", 30).unwrap();
        assert!(
            too_many.starts_with("the policy keeps up to 2501 tables"),
            "{too_many}"
        );
    }

    #[test]
    fn tables_named_as_ours_count_whoever_made_them() {
        let naming = policy("").naming();
        let names = [
            "timeseries_2018-10-24",
            "timeseries_2018-10-25",
            "timeseries_backup",
            "orders",
        ];
        assert_eq!(family_tables(&naming, names), 2);
    }
}
