//! What capw's fuzz targets share: bounded generators of JSON values, JSON Schemas and
//! provider answers driven by the fuzzer's bytes, the quickstart's ClusterClass and Cluster as
//! a valid base to vary, the checks that hold of every computed desired state, and which
//! secret values the host scrubs from a provider's text.
//!
//! The targets are in `fuzz_targets/`; `README.md` says what each covers and how to run them.

pub mod answers;
pub mod json;
pub mod quickstart;
pub mod secrets;
pub mod topology;
