//! Integration tests: the sim in-process, real HTTP over loopback.

mod auth;
mod boot;
mod errors;
mod faults;
mod instances;
mod inventory;
mod managed;
mod real_boot;
mod real_boot_e2e;
mod real_boot_managed;
mod restart;
mod support;
