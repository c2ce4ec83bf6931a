mod iam;
mod schedule_inputs;
