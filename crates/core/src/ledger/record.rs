//! The ledger's records: what the family did, each with the identity AWS gave the thing it made.
//! Stored as JSON in one string attribute of one item per record (`body`), so the schema is
//! defined here once and every control plane (the SDK's, the tests' fakes) only moves text.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::policy::settings::KeySchema;
use crate::table::evidence::{PeriodBounds, TableIdentity};
use crate::table::seal::SealRecord;

/// Where a table record stands.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum TableState {
    /// A run wrote this just before its CreateTable (or ImportTable) and has not recorded the
    /// outcome: a crash in between. The next run resolves it by what AWS shows (a table of
    /// this name and the recorded key created at or after `at` is the one that run made).
    Intended {
        /// When the intent was written (the run's clock).
        at: DateTime<Utc>,
    },
    /// The table exists with this identity, and is ours while AWS shows the same.
    Made {
        /// What AWS gave it.
        identity: TableIdentity,
    },
}

/// How a table came to be the family's.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "origin", rename_all = "snake_case")]
pub enum Origin {
    /// This family's CreateTable.
    Created,
    /// An operator vouched for it (`ddb-rollover adopt`).
    Adopted {
        /// When.
        at: DateTime<Utc>,
    },
    /// Made before the ledger, recorded once by `ddb-rollover init` on its family tag, key and
    /// period.
    Enrolled {
        /// When.
        at: DateTime<Utc>,
    },
    /// `ddb-rollover restore` imported it from the archive a deletion's receipt names.
    Restored {
        /// The import's ARN.
        import_arn: String,
        /// The receipt's record key.
        receipt: String,
        /// Items DescribeImport says were imported.
        imported: u64,
    },
}

/// One table of the family.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TableRecord {
    /// The table's name.
    pub name: String,
    /// Intended or made.
    #[serde(flatten)]
    pub state: TableState,
    /// How it became ours.
    #[serde(flatten)]
    pub origin: Origin,
    /// The period it holds.
    pub period: PeriodBounds,
    /// The key it was made with.
    pub key: KeySchema,
    /// The hash of the policy that recorded it.
    pub policy_hash: String,
    /// Our scaling policies on its scalable targets, by the ARN PutScalingPolicy returned:
    /// a policy named like ours with another ARN is someone else's.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scaling_policies: Vec<String>,
    /// Our seal, while the table is sealed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seal: Option<SealRecord>,
    /// The phase resize_old last dialled the table down to (past phase 0): create_new never
    /// raises such a table again, whatever instant it runs for (a late retry, a replayed
    /// event), and the wall clock need not say so.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lowered: Option<usize>,
    /// Our change feeds on it. `None` in a record written before feeds were recorded: there
    /// the policy's stream and consumer function count as ours, as they did then (a table
    /// made from now on, enrolled or adopted gets `Some`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feeds: Option<Feeds>,
}

/// What the family enabled and mapped on a table, by the identity AWS gave each.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Feeds {
    /// The Kinesis data streams we enabled a destination to. DynamoDB gives a destination no
    /// identity but the table and the stream's ARN; recorded, a destination to a stream the
    /// policy no longer names is still known as ours.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub destinations: Vec<String>,
    /// Our event source mappings on its streams, by the UUID CreateEventSourceMapping returned:
    /// a mapping of our consumer function with another UUID is someone else's.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mappings: Vec<String>,
    /// When a run was about to create a mapping and has not recorded its UUID yet (a crash in
    /// between): the mapping of the consumer function on the table's stream that Lambda last
    /// modified since then is that run's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mapping_intended: Option<DateTime<Utc>>,
}

impl TableRecord {
    /// The identity recorded, once made.
    pub fn identity(&self) -> Option<&TableIdentity> {
        match &self.state {
            TableState::Made { identity } => Some(identity),
            TableState::Intended { .. } => None,
        }
    }
}

/// How the ledger was started.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "bootstrap", rename_all = "snake_case")]
pub enum Meta {
    /// By the first run of a family that had no table yet.
    FirstRun {
        /// When.
        at: DateTime<Utc>,
    },
    /// By an operator's `ddb-rollover init`, which enrolled the tables made before it.
    Init {
        /// When.
        at: DateTime<Utc>,
        /// How many tables it enrolled.
        enrolled: u64,
    },
}

/// One run's hold on an operation of the family: overlapping runs defer instead of colliding.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Lease {
    /// The run holding it.
    pub holder: String,
    /// When it lapses (a crashed run's lease lapses by itself).
    pub until: DateTime<Utc>,
}

/// The record keys: one item a record, in the family's partition.
pub mod keys {
    /// The ledger's own record.
    pub const META: &str = "meta";

    /// A table's record.
    pub fn table(name: &str) -> String {
        format!("table#{name}")
    }

    /// A deletion's receipt: by name and the deleted table's creation time.
    pub fn receipt(name: &str, created_millis: i64) -> String {
        format!("receipt#{name}#{created_millis:013}")
    }

    /// An operation's lease.
    pub fn lease(operation: &str) -> String {
        format!("lease#{operation}")
    }

    /// The record of a parameter the family publishes.
    pub fn parameter(name: &str) -> String {
        format!("parameter#{name}")
    }

    /// The table a receipt key names.
    pub fn receipt_table(key: &str) -> Option<&str> {
        key.strip_prefix("receipt#")?
            .rsplit_once('#')
            .map(|(name, _)| name)
    }
}
