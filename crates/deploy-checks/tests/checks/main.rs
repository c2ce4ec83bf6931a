//! The deploy checks that need no server, one test binary: the alarm, the ledger, the policy parameters,
//! samconfig.toml and the functions' schedules against template.yaml. Those that run the handlers against moto are in the
//! top-level `tests/` package (`deploy`).

mod alarm;
mod allowed;
mod ledger;
mod policy_parameters;
mod samconfig;
mod schedules;
