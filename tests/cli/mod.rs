mod common;

mod bounds;
mod demo;
mod e2e;
mod exactly;
mod families;
mod faults;
mod lifecycle;
mod loud;
mod no_autoscaling;
mod offline;
mod overlap;
mod quota;

mod mapping;
mod restore;
mod retagged;
mod scale;
mod stream;
mod survival;
mod unread;
mod warm;
mod warnings;
