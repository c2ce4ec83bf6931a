//! [`FakeAws`]: a handle on the shared account, acting as our role, another family's role or the
//! operator; the harness moves its clock, reads its state and its log, and every mutating call
//! goes through [`FakeAws::call`] to be logged.

use ddb_rollover::control::ControlPlaneError;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};

use chrono::{DateTime, Duration, Utc};

use crate::errors::not_found;
use crate::injection::{Around, Injected};
use crate::log::Traffic;
use crate::log::{Call, Effect};
use crate::maker::Maker;
use crate::objects::Status;
use crate::objects::Table;
use crate::world::{Config, World};

/// The buckets of the rate-limited operations, by operation; empty until a test turns AWS's
/// rates on ([`FakeAws::aws_rates`]).
pub(crate) type Rates = BTreeMap<&'static str, aws_model::rates::Bucket>;

/// Who made the family's ledger: its stack (template.yaml), not a run.
pub const STACK: &str = "stack";

/// The fake control plane, acting with the IAM role of one family (or, for the operator,
/// without IAM). Clones share the account.
#[derive(Clone)]
pub struct FakeAws {
    pub(crate) world: Arc<Mutex<World>>,
    pub(crate) family: String,
    pub(crate) actor: Maker,
    /// The role's IAM applies (false: the operator's administrator credentials).
    pub(crate) iam: bool,
    /// The requests made through the ports, as the tests observe them.
    pub(crate) traffic: Arc<Mutex<Traffic>>,
    /// The failures and acts tests inject into our calls.
    pub(crate) injected: Arc<Mutex<Injected<FakeAws>>>,
    /// The account's per-account rates, when a test turned them on ([`FakeAws::aws_rates`]).
    pub(crate) rates: Arc<Mutex<Rates>>,
}

impl FakeAws {
    /// An account at `now`, seen through the role of the family `family` (our runs).
    pub fn new(family: &str, now: DateTime<Utc>, config: Config) -> FakeAws {
        let fake = FakeAws {
            world: Arc::new(Mutex::new(World {
                config,
                ..World::from_state(now, BTreeMap::new(), BTreeMap::new())
            })),
            family: family.to_string(),
            actor: Maker::Us,
            iam: true,
            traffic: Arc::default(),
            injected: Arc::default(),
            rates: Arc::default(),
        };
        // The family's ledger, as its stack made it (template.yaml's LedgerTable): empty, ACTIVE.
        let ledger = crate::specs::ledger_spec(&format!("{family}_ledger"), family);
        {
            let mut world = fake.lock();
            Self::create(
                &mut world,
                &Maker::Foreign(STACK.into()),
                &ledger,
                &mut Vec::new(),
            )
            .expect("the fake can create the ledger");
            let table = world.tables.get_mut(&ledger.name).expect("just created");
            table.status = Status::Active;
            table.ready_at = None;
            table.pitr = true;
        }
        fake
    }

    /// The same account through the role of another family, as a foreign actor named `who`.
    pub fn acting_as(&self, family: &str, who: &str) -> FakeAws {
        FakeAws {
            world: Arc::clone(&self.world),
            family: family.to_string(),
            actor: Maker::Foreign(who.to_string()),
            iam: true,
            traffic: Arc::clone(&self.traffic),
            injected: Arc::clone(&self.injected),
            rates: Arc::clone(&self.rates),
        }
    }

    /// The same account through the operator's own credentials (an administrator: no role,
    /// no IAM conditions), as the foreign actor `operator`: what `ddb-rollover adopt` runs with.
    pub fn operator(&self) -> FakeAws {
        FakeAws {
            world: Arc::clone(&self.world),
            family: self.family.clone(),
            actor: Maker::operator(),
            iam: false,
            traffic: Arc::clone(&self.traffic),
            injected: Arc::clone(&self.injected),
            rates: Arc::clone(&self.rates),
        }
    }

    /// Ground truth: the operator adopted `table` (a real `adopt` wrote our family tag on it).
    pub fn mark_adopted(&self, table: &str) {
        if let Some(t) = self.lock().tables.get_mut(table) {
            t.adopted = true;
        }
    }

    /// The family whose role this handle acts with.
    pub fn family(&self) -> &str {
        &self.family
    }

    pub(crate) fn lock(&self) -> MutexGuard<'_, World> {
        let mut world = self.world.lock().unwrap_or_else(|e| e.into_inner());
        world.tick();
        world
    }

    /// The account's fake time now.
    pub fn now(&self) -> DateTime<Utc> {
        self.lock().now
    }

    /// Moves the clock to `t` (never backwards).
    pub fn set_now(&self, t: DateTime<Utc>) {
        let mut world = self.lock();
        if t > world.now {
            world.now = t;
        }
        world.tick();
    }

    /// Moves the clock forward by `by`, ending what was due meanwhile.
    pub fn advance(&self, by: Duration) {
        let mut world = self.lock();
        world.now += by;
        world.tick();
    }

    /// A copy of everything, for assertions.
    pub fn snapshot(&self) -> World {
        self.lock().clone()
    }

    /// A copy of the account's state without the log (cheaper than [`Self::snapshot`]; read the
    /// log with [`Self::calls_since`]).
    pub fn state(&self) -> World {
        let mut world = self.lock();
        let log = std::mem::take(&mut world.log);
        let state = world.clone();
        world.log = log;
        state
    }

    /// Reads the account (after ending what was due) without copying it.
    pub fn with_world<T>(&self, f: impl FnOnce(&World) -> T) -> T {
        f(&self.lock())
    }

    /// How many calls are logged so far: a mark for [`FakeAws::calls_since`].
    pub fn log_len(&self) -> usize {
        self.lock().log.len()
    }

    /// The calls logged since the log had `from` entries.
    pub fn calls_since(&self, from: usize) -> Vec<Call> {
        self.lock().log[from..].to_vec()
    }

    /// Runs a mutating call and logs it, with the acts a test injected around our calls.
    pub(crate) fn call<T>(
        &self,
        actor: &Maker,
        role: Option<&str>,
        operation: &'static str,
        table: &str,
        f: impl FnOnce(&mut World, &mut Vec<Effect>) -> Result<T, ControlPlaneError>,
    ) -> Result<T, ControlPlaneError> {
        if actor.meets_injections() {
            self.act_around(Around::Before, operation, table);
        }
        let result = {
            let mut world = self.lock();
            let mut effects = Vec::new();
            let result = f(&mut world, &mut effects);
            let at = world.now;
            world.log.push(Call {
                at,
                actor: actor.clone(),
                role: role.map(str::to_string),
                operation,
                table: table.to_string(),
                error: result.as_ref().err().map(|e| (e.kind, e.message.clone())),
                effects,
            });
            result
        };
        if actor.meets_injections() {
            self.act_around(Around::After, operation, table);
        }
        result
    }

    /// One of this handle's mutating calls through a port: requested (recorded, held while
    /// others are in flight, refused if a failure was injected), then made and logged.
    pub(crate) async fn change<T>(
        &self,
        operation: &'static str,
        table: &str,
        f: impl FnOnce(&mut World, &mut Vec<Effect>) -> Result<T, ControlPlaneError>,
    ) -> Result<T, ControlPlaneError> {
        self.request(operation, table).await?;
        self.call(&self.actor, self.role(), operation, table, f)
    }

    /// [`FakeAws::change`] of the table `name`, made only if the role may: its IAM action is
    /// the operation's own (`dynamodb:` and the operation's name).
    pub(crate) async fn change_table<T>(
        &self,
        operation: &'static str,
        name: &str,
        f: impl FnOnce(&mut World, &mut Vec<Effect>) -> Result<T, ControlPlaneError>,
    ) -> Result<T, ControlPlaneError> {
        self.change(operation, name, |world, effects| {
            self.may_change(world, operation, &format!("dynamodb:{operation}"), name)?;
            f(world, effects)
        })
        .await
    }

    /// One of this handle's reads of the table `name` through a port: requested, made only if
    /// the role may (its IAM action is the operation's own), then `read` from the table, which
    /// must exist.
    pub(crate) async fn read_table<T>(
        &self,
        operation: &'static str,
        name: &str,
        read: impl FnOnce(&Table) -> T,
    ) -> Result<T, ControlPlaneError> {
        self.request(operation, name).await?;
        self.may_read(operation, &format!("dynamodb:{operation}"), name)?;
        let world = self.lock();
        let table = world.tables.get(name).ok_or_else(|| not_found(operation, name))?;
        Ok(read(table))
    }

    pub(crate) fn role(&self) -> Option<&str> {
        self.iam.then_some(self.family.as_str())
    }
}
