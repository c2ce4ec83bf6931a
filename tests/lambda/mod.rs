mod common;

mod clock_warning;
mod ddblocal;
mod from_env;
mod handler;
mod publish;
mod quota;
mod runtime_api;
mod warm;
