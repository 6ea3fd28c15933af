//! capw's fuzz targets as plain functions, and what they share: bounded generators of JSON
//! values, JSON Schemas and provider answers driven by the fuzzer's bytes, the quickstart's
//! ClusterClass and Cluster as a valid base to vary, the checks that hold of every computed
//! desired state, and which secret values the host scrubs from a provider's text.
//!
//! Start at [`targets`]: one module per target, each with the `run` function libFuzzer's
//! entry in `fuzz/fuzz_targets/` calls and the `replay` this crate's tests call on every file
//! of the target's corpus. `fuzz/README.md` says what each target covers and how to fuzz.

pub mod answers;
pub mod json;
pub mod quickstart;
pub mod secrets;
pub mod targets;
pub mod topology;
