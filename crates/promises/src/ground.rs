//! Ground truth: whose each object is, from the fake's records (never the engine's opinion).

use std::collections::BTreeMap;

use ddb_rollover::ledger::{StoredRecord, TableIdentity, TableRecord, TableState};
use ddb_rollover::policy::ScalableDimension;
use ddb_rollover::policy::Slot;
use ddb_rollover::policy::{Billing, LocalIndex};
use ddb_rollover::Policy;
use fake_aws::{Maker, ScalingPolicy, Status, Table, Target, World, FAMILY_TAG};

use crate::names::{PERSON, PREFIX};

/// Whose each object is, by the fake's records (who made it, whether the operator adopted it), never by the engine's opinion.
pub struct Ground<'a> {
    /// The family's policy.
    pub policy: &'a Policy,
    /// The account.
    pub world: &'a World,
}

/// The name our runs give their target-tracking policy on `dimension`.
pub fn our_policy_name(dimension: ScalableDimension) -> String {
    let short = if dimension.is_read() { "read" } else { "write" };
    format!("ddb-rollover-{PREFIX}-{short}")
}

/// Whether a scaling policy bears one of our runs' names.
pub fn is_our_policy_name(name: &str) -> bool {
    name == format!("ddb-rollover-{PREFIX}-read") || name == format!("ddb-rollover-{PREFIX}-write")
}

/// Our policy: made by our runs (a policy's name is free text: someone else's named like ours
/// is theirs), under our name for the target's dimension.
pub fn is_our_policy(policy: &ScalingPolicy) -> bool {
    policy.maker.is_us() && is_our_policy_name(&policy.name)
}

/// Whether our runs registered the target.
pub fn target_is_ours(target: &Target) -> bool {
    let ours = our_policy_name(target.key.dimension);
    target.policies.iter().any(|p| p.name == ours && p.maker.is_us())
}

/// The period the table named `name` holds, by its label under `policy`.
pub fn label_slot(policy: &Policy, name: &str) -> Option<Slot> {
    let label = name.strip_prefix(&format!("{PREFIX}_"))?;
    policy.calendar().parse(label).ok()
}

/// Whether the table has exactly the policy's local indexes.
pub fn same_lsis(table: &Table, policy: &Policy) -> bool {
    let sorted = |indexes: &[LocalIndex]| {
        let mut indexes = indexes.to_vec();
        indexes.sort_by(|a, b| a.name.cmp(&b.name));
        indexes
    };
    sorted(&table.lsis) == sorted(&policy.local_indexes)
}

/// The dimensions (read: `true`, write: `false`) whose throughput differs between `from` and
/// `to`; a billing mode switch, or a change of on-demand maximums, is both.
pub fn dimensions_changed(from: Billing, to: Billing) -> Vec<bool> {
    match (from, to) {
        (Billing::Provisioned(a), Billing::Provisioned(b)) => {
            [(true, a.read != b.read), (false, a.write != b.write)]
                .into_iter()
                .filter(|(_, changed)| *changed)
                .map(|(read, _)| read)
                .collect()
        }
        _ if from == to => Vec::new(),
        _ => vec![true, false],
    }
}

/// `read` or `write`, as the promises' messages say it.
pub fn dimension_name(read: bool) -> &'static str {
    if read {
        "read"
    } else {
        "write"
    }
}

/// The family's ledger items in `world`, by key; `None` without a ledger table (or while it is
/// being deleted).
pub fn ledger_items(world: &World) -> Option<BTreeMap<String, StoredRecord>> {
    let table = world
        .tables
        .get(&ledger_name())
        .filter(|t| t.status != Status::Deleting)?;
    Some(
        table
            .records
            .iter()
            .filter(|((family, _), _)| family == PREFIX)
            .map(|((_, key), record)| (key.clone(), record.clone()))
            .collect(),
    )
}

/// Who last changed the ledger item `key` of `world`'s ledger (put or deleted it), if anyone.
pub fn last_writer<'w>(world: &'w World, key: &str) -> Option<&'w Maker> {
    let ledger = ledger_name();
    world
        .ledger_writes
        .iter()
        .rev()
        .find(|w| w.ledger == ledger && w.family == PREFIX && w.key == key)
        .map(|w| &w.actor)
}

/// Whether the last change of the ledger item `key` was someone else's edit ([`PERSON`]'s: not
/// a run of ours, nor the operator's `adopt`, `init` or `restore`).
pub fn forged(world: &World, key: &str) -> bool {
    last_writer(world, key).is_some_and(|m| *m == Maker::Foreign(PERSON.into()))
}

/// Why the family's ledger in `world` cannot be rested on, judged from the fake's items (never
/// the engine's reading of them): no ledger table, no `meta` item, or an item whose body is not
/// JSON at all.
pub fn ledger_unsound(world: &World) -> Option<String> {
    let Some(items) = ledger_items(world) else {
        return Some("the ledger table does not exist".into());
    };
    if !items.contains_key("meta") {
        return Some("the ledger has no meta item".into());
    }
    let unreadable: Vec<&String> = items
        .iter()
        .filter(|(_, r)| serde_json::from_str::<serde_json::Value>(&r.body).is_err())
        .map(|(k, _)| k)
        .collect();
    (!unreadable.is_empty()).then(|| format!("the ledger items {unreadable:?} are no records"))
}

/// The table, live or gone, that DynamoDB gave `identity` (ARN, creation time to the
/// millisecond, TableId where recorded).
pub fn table_with_identity<'w>(world: &'w World, identity: &TableIdentity) -> Option<&'w Table> {
    world
        .tables
        .values()
        .chain(world.gone.iter())
        .find(|t| identity.is(&identity_of(t)))
}

impl Ground<'_> {
    /// Whether our CreateTable made `table`, or the operator adopted it.
    pub fn provably_ours(&self, table: &Table) -> bool {
        table.maker == Maker::Us || table.adopted
    }

    /// Whether the family's ledger claims `table`: its record holds the table's own identity,
    /// or is an intent a run of ours left that the table, created since with the recorded key,
    /// resolves (what a run records as its own).
    pub fn ledger_claims(&self, table: &Table) -> bool {
        let key = format!("table#{}", table.name);
        let Some(record) = ledger_items(self.world)
            .and_then(|items| items.get(&key).cloned())
            .and_then(|r| serde_json::from_str::<TableRecord>(&r.body).ok())
        else {
            return false;
        };
        match &record.state {
            TableState::Made { identity } => identity.is(&identity_of(table)),
            TableState::Intended { at } => {
                table.created_at >= *at - chrono::Duration::minutes(5) && table.key == record.key
            }
        }
    }

    /// Whether a run is excused for changing `table`, which someone else made, because the
    /// ledger claims it (the ledger is the family's trust root: only the stack's roles and an
    /// operator's CLI may write it) and what claims it is beyond the engine's reach: an identity
    /// someone else's edit of the ledger put there, or our family tag on a table made in the
    /// window of a crashed run's intent (an impersonation of the family in every mark the
    /// engine can read). Deleting it is excused only for an impersonation (promise 2): a forged
    /// record alone is never enough evidence.
    pub fn claimed_beyond_reach(&self, table: &Table, deleted: bool) -> bool {
        if !self.ledger_claims(table) {
            return false;
        }
        let forged = forged_identity(self.world, &table.name, &identity_of(table));
        if deleted {
            impersonates(table)
        } else {
            forged || impersonates(table)
        }
    }

    /// Whether the ledger holds `table` as a run of ours or the operator wrote it: its record
    /// is readable, last written by us or the operator, and a record of this very table (or an
    /// intent a run of ours left for it). Without it the engine rightly leaves the table alone.
    pub fn recorded_as_written(&self, table: &Table) -> bool {
        let key = format!("table#{}", table.name);
        let Some(stored) = ledger_items(self.world).and_then(|items| items.get(&key).cloned()) else {
            return false;
        };
        match serde_json::from_str::<TableRecord>(&stored.body) {
            Ok(record) => match record.identity() {
                Some(identity) => {
                    identity.is(&identity_of(table)) && !forged_identity(self.world, &table.name, identity)
                }
                None => !forged(self.world, &key),
            },
            Err(_) => false,
        }
    }

    /// Whether our runs may claim `table` by name: `{prefix}_{label}`, the policy's key, no family tag.
    pub fn claimable_by_name(&self, table: &Table) -> bool {
        !self.provably_ours(table)
            && label_slot(self.policy, &table.name).is_some()
            && table.key == self.policy.key
            && !table.tags.contains_key(FAMILY_TAG)
    }

    /// Why the table is foreign, if it is.
    pub fn foreign_table(&self, table: &Table) -> Option<String> {
        if self.provably_ours(table) || self.claimable_by_name(table) {
            return None;
        }
        Some(match (table.family(), &table.maker) {
            (Some(family), maker) if family != PREFIX => {
                format!("another family's ({FAMILY_TAG} = {family:?}, made by {maker:?})")
            }
            (_, maker) if label_slot(self.policy, &table.name).is_none() => {
                format!("not named {PREFIX}_{{label}} (made by {maker:?})")
            }
            (_, maker) if table.key != self.policy.key => {
                format!("a look-alike on key {} (made by {maker:?})", table.key)
            }
            (_, maker) => format!("made by {maker:?}, not adopted"),
        })
    }

    /// Why a GSI is foreign: its name, key or projection is not the policy's index's.
    pub fn foreign_gsi(&self, table: &str, index: &str) -> Option<String> {
        let gsi = self.world.tables.get(table)?.gsi(index)?;
        match self.policy.indexes.iter().find(|i| i.name == gsi.name) {
            None => Some(format!("index {index} is not in the policy")),
            Some(want) if want.key != gsi.key || want.projection != gsi.projection => Some(format!(
                "index {index} is on key {} / {}, the policy's is on {} / {}",
                gsi.key, gsi.projection, want.key, want.projection
            )),
            Some(_) => None,
        }
    }

    /// Why the targets of a resource (`table/T` or `table/T/index/I`) are not all ours alone.
    pub fn foreign_scaling_on(&self, resource_id: &str) -> Option<String> {
        let mut why = Vec::new();
        for target in self
            .world
            .targets
            .values()
            .filter(|t| t.key.resource_id == resource_id)
        {
            why.extend(not_ours_on(target));
        }
        (!why.is_empty()).then(|| why.join(", "))
    }

    /// Why the scalable target holding one dimension (read or write) of a resource (`table/T` or
    /// `table/T/index/I`) is not ours alone: a target without our policy, or with someone
    /// else's policy on it. A change to that dimension's throughput would change theirs.
    pub fn claim_on(&self, resource_id: &str, read: bool) -> Option<String> {
        let target = self
            .world
            .targets
            .values()
            .find(|t| t.key.resource_id == resource_id && t.key.dimension.is_read() == read)?;
        let why = not_ours_on(target);
        (!why.is_empty()).then(|| why.join(", "))
    }

    /// Each dimension (`read`, `write`) a throughput change of `resource` from `from` to `to`
    /// changed under a scalable target not ours alone, with why ([`Self::claim_on`]).
    pub fn claims_changed(&self, resource: &str, from: Billing, to: Billing) -> Vec<(&'static str, String)> {
        dimensions_changed(from, to)
            .into_iter()
            .filter_map(|read| Some((dimension_name(read), self.claim_on(resource, read)?)))
            .collect()
    }

    /// Who else turned the table's deletion protection on, when the policy does not ask for it.
    pub fn foreign_protection(&self, table: &Table) -> Option<String> {
        let maker = table.protected_by.as_ref().filter(|m| !m.is_us())?;
        (table.deletion_protection && self.policy.template.deletion_protection != Some(true))
            .then(|| format!("deletion protection turned on by {maker:?}, which the policy does not ask for"))
    }

    /// What foreign claims the table: another family's tag, foreign targets or policies on it or
    /// its GSIs.
    pub fn foreign_claims(&self, table: &Table) -> Option<String> {
        let mut why = Vec::new();
        if let Some(family) = table.family().filter(|f| *f != PREFIX) {
            why.push(format!("{FAMILY_TAG} = {family:?}"));
        }
        for target in self.world.targets_on(&table.name) {
            if let Some(w) = self.foreign_scaling_on(&target.key.resource_id) {
                if !why.contains(&w) {
                    why.push(w);
                }
            }
        }
        why.extend(self.foreign_protection(table));
        (!why.is_empty()).then(|| why.join("; "))
    }

    /// Anything foreign on a table: a foreign claim or a foreign GSI.
    pub fn foreign_on(&self, table: &Table) -> Option<String> {
        let mut why: Vec<String> = self.foreign_claims(table).into_iter().collect();
        why.extend(
            table
                .gsis
                .iter()
                .filter_map(|g| self.foreign_gsi(&table.name, &g.name)),
        );
        (!why.is_empty()).then(|| why.join("; "))
    }
}

/// The scheduled actions on a target: none is ours (we never create one).
/// What on a target is not ours alone: the target itself (made without our policy), someone
/// else's policies and every scheduled action.
fn not_ours_on(target: &Target) -> Vec<String> {
    let mut why = Vec::new();
    if !target_is_ours(target) {
        why.push(format!(
            "foreign target {} (made by {:?})",
            target.key, target.maker
        ));
    }
    for p in target.policies.iter().filter(|p| !is_our_policy(p)) {
        why.push(format!(
            "foreign {} policy {:?} on {} (made by {:?})",
            p.policy_type, p.name, target.key, p.maker
        ));
    }
    why.extend(scheduled_on(target));
    why
}

pub(super) fn scheduled_on(target: &Target) -> Vec<String> {
    target
        .scheduled_actions
        .iter()
        .map(|a| {
            format!(
                "scheduled action {:?} on {} (made by {:?})",
                a.name, target.key, a.maker
            )
        })
        .collect()
}

/// The statements of `table`'s resource-based policy that are not a seal (a Deny of item
/// writes to everyone under the seal's Sid): someone else's, by Sid.
pub fn foreign_statements(table: &Table) -> Vec<String> {
    let Some(document) = table
        .resource_policy
        .as_ref()
        .and_then(|p| serde_json::from_str::<serde_json::Value>(&p.document).ok())
    else {
        return Vec::new();
    };
    let statements = match &document["Statement"] {
        serde_json::Value::Array(list) => list.clone(),
        one @ serde_json::Value::Object(_) => vec![one.clone()],
        _ => Vec::new(),
    };
    statements
        .iter()
        .filter(|s| {
            !(s["Sid"] == ddb_rollover::table::SEAL_SID && s["Effect"] == "Deny" && s["Principal"] == "*")
        })
        .map(|s| s["Sid"].as_str().unwrap_or("(no Sid)").to_string())
        .collect()
}

/// The family's ledger table.
pub fn ledger_name() -> String {
    format!("{PREFIX}_ledger")
}

/// The identity DynamoDB shows for `table`.
pub fn identity_of(table: &Table) -> TableIdentity {
    TableIdentity::new(&table.arn, table.created_at, Some(&table.table_id))
}

/// Whether `identity` first came into the ledger's record of `name` by someone else's edit (a
/// run that carries such a record forward writes it again as its own).
pub fn forged_identity(world: &World, name: &str, identity: &TableIdentity) -> bool {
    let key = format!("table#{name}");
    world
        .ledger_writes
        .iter()
        .filter(|w| w.ledger == ledger_name() && w.key == key)
        .find(|w| {
            w.record
                .as_ref()
                .and_then(|r| serde_json::from_str::<TableRecord>(&r.body).ok())
                .is_some_and(|r| r.identity().is_some_and(|i| i.is(identity)))
        })
        .is_some_and(|w| w.actor == Maker::Foreign(PERSON.into()))
}

/// Whether someone other than our runs made `table` carrying our family tag: an impersonation
/// of the family in every mark the engine can read (the evidence before the ledger was that tag).
pub fn impersonates(table: &Table) -> bool {
    !table.maker.is_us() && table.family() == Some(PREFIX)
}
