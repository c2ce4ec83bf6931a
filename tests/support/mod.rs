//! Helpers shared by every area. The servers and the proxy are the `testkit` crate's.

pub mod binaries;
