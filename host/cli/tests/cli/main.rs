//! The `capw` command line, run as a process: a module per command family. The crash campaigns
//! are a binary of their own (tests/crash), which the suite runs beside others while this one,
//! whose starter matrix compiles on both cores, runs alone.

mod admission;
mod crds;
mod describe;
mod hostile_text;
mod inspect;
mod new;
mod oci;
mod plugin_test;

#[path = "../common/mod.rs"]
mod common;

use common::capw_with_state;
