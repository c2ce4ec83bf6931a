//! Who made an object or a call: the ground truth the promises judge by.

/// Who made an object, or made a call.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Maker {
    /// Our runs, through the control plane of the fake built with `FakeAws::new`.
    Us,
    /// Anyone else: a person, another tool, another family's runs.
    Foreign(String),
}

impl Maker {
    /// Whether our runs made it.
    pub fn is_us(&self) -> bool {
        *self == Maker::Us
    }

    /// The operator's own credentials (`FakeAws::operator`): a foreign actor whose calls go
    /// through the ports, as ours do.
    pub fn operator() -> Maker {
        Maker::Foreign("operator".into())
    }

    /// Whether injected acts happen around this actor's calls: ours and the operator's (the
    /// ports), not the foreign acts themselves.
    pub(crate) fn meets_injections(&self) -> bool {
        self.is_us() || *self == Maker::operator()
    }
}
