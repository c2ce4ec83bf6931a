//! [`Mappings`] on the fake: not modelled yet, so every call answers `Unsupported` (an endpoint
//! without Lambda).

use ddb_rollover::run::control::Mappings;

use crate::FakeAws;

impl Mappings for FakeAws {}
