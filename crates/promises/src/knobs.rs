//! Which kinds of steps and policies the generator may use (`PROMISES_WITHOUT`,
//! `PROMISES_WITH`): read by the policies' and the steps' strategies.

use std::collections::BTreeSet;

/// Which kinds of steps and policies the generator may use; `PROMISES_WITHOUT` (a comma-separated
/// list) takes names out, `PROMISES_WITH` puts in those [`OFF_BY_DEFAULT`]:
/// - steps: `foreign` (every foreign act), or one act: `hand_made`, `restored`, `sibling`,
///   `tag_other_family`, `untag_family`, `capacity`, `delete`, `delete_newest`, `target`,
///   `step_policy`, `add_index` (the policy's index name on another key), `add_extra_index`,
///   `drop_scaling`, `spend_decreases`, `adopt`, `pre_warm`, `disable_key`, `scheduled_action`,
///   `deletion_protection`, `write_items`, `resource_policy`, `foreign_destination`,
///   `disable_destination`, `destination_precision`, `delete_stream`, `foreign_mapping`,
///   `delete_mapping`, `disable_mapping`, `delete_consumer`, `ledger_delete`, `ledger_edit`,
///   `delete_ledger`, `crashed_lease`, `crashed_intent`, `recreate`, `named_like_ours`, `init`,
///   `restore`; and the steps `create_new_at` and `zone`;
/// - hand-made tables: `hand_made_extra_gsi` (indexes the policy does not name),
///   `hand_made_on_demand`;
/// - policies: `grace`, `ttl`, `autoscaling` (such phases become fixed ones), `retention`,
///   `archive`, `policy_without_gsi` (every policy then has the index `by_device`),
///   `table_class` (phases keep the table's class), `on_demand_max` (on-demand phases without
///   maximums), `warm` (phases without warm throughput), `stream` (no policy names a Kinesis
///   data stream), `lambda` (no policy names a consumer function or gives its tables a stream).
#[derive(Clone, Debug)]
pub struct Knobs {
    /// The names `PROMISES_WITHOUT` takes out.
    pub without: BTreeSet<String>,
}

impl Knobs {
    /// The knobs `PROMISES_WITHOUT` and `PROMISES_WITH` set.
    pub fn from_env() -> Knobs {
        Knobs {
            without: std::env::var("PROMISES_WITHOUT")
                .unwrap_or_default()
                .split(',')
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .collect(),
        }
    }

    /// Whether `name` is in the cases: not taken out, and when it is one of [`OFF_BY_DEFAULT`],
    /// named in `PROMISES_WITH` (a comma-separated list).
    pub fn on(&self, name: &str) -> bool {
        let asked = || {
            std::env::var("PROMISES_WITH")
                .unwrap_or_default()
                .split(',')
                .any(|s| s.trim() == name)
        };
        !self.without.contains(name) && (!OFF_BY_DEFAULT.contains(&name) || asked())
    }
}

/// Acts left out unless `PROMISES_WITH` names them: each breaks a promise on today's engine, as
/// the report of the work that added it says, until the engine is made to keep it.
/// - `named_like_ours`: the verdict judges a scaling policy ours by its name (`judge_target`),
///   not by the ARN PutScalingPolicy returned (issue 37, finding 1): someone's target with a
///   policy named exactly like ours is deregistered, their policy deleted with it.
pub const OFF_BY_DEFAULT: &[&str] = &["named_like_ours"];
