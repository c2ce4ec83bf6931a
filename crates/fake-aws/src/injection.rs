//! What a test injects into the account's answers to our runs: a call failing with a given
//! error a number of times, and another actor's act right before or after one of our calls
//! (a race with another run, a table deleted behind the run's back).

use ddb_rollover::control::ErrorKind;

/// When an injected act happens, around our call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Around {
    /// Right before the call changes anything: the call sees what the act did.
    Before,
    /// Right after the call: the next request sees it.
    After,
}

/// The failures and acts waiting for their call.
pub(crate) struct Injected<H> {
    pub(crate) failures: Vec<Failure>,
    pub(crate) acts: Vec<Act<H>>,
}

/// A failure injected into a call.
pub(crate) struct Failure {
    pub(crate) operation: &'static str,
    pub(crate) table: String,
    pub(crate) kind: ErrorKind,
    /// How many more calls fail (`usize::MAX`: every one).
    pub(crate) left: usize,
}

/// An act injected around a call, made on the handle `H` the call was made through.
pub(crate) struct Act<H> {
    pub(crate) around: Around,
    pub(crate) operation: &'static str,
    pub(crate) table: String,
    pub(crate) act: Box<dyn FnOnce(&H) + Send>,
}

impl<H> Default for Injected<H> {
    fn default() -> Self {
        Injected {
            failures: Vec::new(),
            acts: Vec::new(),
        }
    }
}
