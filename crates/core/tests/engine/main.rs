//! The engine's self-contained tests, one test binary: planning, execution against the
//! in-memory account, the promises property test and the module graph. The SDK adapters'
//! tests against mocked replies are crates/aws's; tests that need a local DynamoDB server live
//! in the top-level `tests/` package (`engine` there).

mod common;

mod adopt_rules;
mod autoscaling_rules;
mod executor;
mod ledger_rules;
mod lifecycle_rules;
mod loud;
mod mapping_lifecycle;
mod module_graph;
mod period_props;
mod planner;
mod planner_indexes;
mod planner_mapping;
mod planner_stream;
mod planner_warm;
mod policy_bounds;
mod policy_checks;
mod promises;
mod restore;
mod scale;
mod seal_rules;
mod stream_readiness;
mod warm_readiness;
