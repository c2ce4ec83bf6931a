//! What a test injects into the account's answers to our runs: a call failing with a given
//! error a number of times, and another actor's act right before or after one of our calls
//! (a race with another run, a table deleted behind the run's back).

use ddb_rollover::run::control::{ControlPlaneError, ErrorKind};

use crate::errors::error;
use crate::FakeAws;

/// When an injected act happens, around our call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Around {
    /// Right before the call changes anything: the call sees what the act did.
    Before,
    /// Right after the call: the next request sees it.
    After,
}

/// The failures and acts waiting for their call.
#[derive(Default)]
pub(crate) struct Injected {
    failures: Vec<Failure>,
    acts: Vec<Act>,
}

struct Failure {
    operation: &'static str,
    table: String,
    kind: ErrorKind,
    /// How many more calls fail (`usize::MAX`: every one).
    left: usize,
}

struct Act {
    around: Around,
    operation: &'static str,
    table: String,
    act: Box<dyn FnOnce(&FakeAws) + Send>,
}

impl FakeAws {
    fn injected(&self) -> std::sync::MutexGuard<'_, Injected> {
        self.injected.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Every `operation` on `table` through the ports fails with `kind`, changing nothing (the
    /// message says `injected {kind:?}`).
    pub fn fail(&self, operation: &'static str, table: &str, kind: ErrorKind) {
        self.fail_times(operation, table, kind, usize::MAX);
    }

    /// The next `times` calls of `operation` on `table` fail with `kind`; later ones go through.
    pub fn fail_times(&self, operation: &'static str, table: &str, kind: ErrorKind, times: usize) {
        self.injected().failures.push(Failure {
            operation,
            table: table.to_string(),
            kind,
            left: times,
        });
    }

    /// `act` happens once, `around` our next `operation` on `table` (whether the call succeeds
    /// or not); it acts through the handle it is given, usually with a `foreign_*` method.
    pub fn around(
        &self,
        around: Around,
        operation: &'static str,
        table: &str,
        act: impl FnOnce(&FakeAws) + Send + 'static,
    ) {
        self.injected().acts.push(Act {
            around,
            operation,
            table: table.to_string(),
            act: Box::new(act),
        });
    }

    /// The injected failure this request meets, if any (counting it).
    pub(crate) fn injected_failure(&self, operation: &'static str, table: &str) -> Option<ControlPlaneError> {
        let mut injected = self.injected();
        let failure = injected
            .failures
            .iter_mut()
            .find(|f| f.operation == operation && f.table == table && f.left > 0)?;
        if failure.left != usize::MAX {
            failure.left -= 1;
        }
        let kind = failure.kind;
        Some(error(kind, operation, table, format!("injected {kind:?}")))
    }

    /// Runs (once) the acts injected `around` this call; the caller holds no lock on the world.
    pub(crate) fn act_around(&self, around: Around, operation: &'static str, table: &str) {
        let due: Vec<Act> = {
            let mut injected = self.injected();
            let (due, waiting) = std::mem::take(&mut injected.acts)
                .into_iter()
                .partition(|a| a.around == around && a.operation == operation && a.table == table);
            injected.acts = waiting;
            due
        };
        for act in due {
            (act.act)(self);
        }
    }
}
