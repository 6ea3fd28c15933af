//! The `capw` command line, run as a process: one test binary for the crate, a module per
//! command family.

mod admission;
mod crash;
mod crds;
mod describe;
mod hostile_text;
mod inspect;
mod new;
mod oci;
mod plugin_test;
