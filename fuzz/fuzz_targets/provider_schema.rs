//! libFuzzer's entry to the `provider_schema` target: it decodes the input and calls
//! `capw_fuzz::targets::provider_schema::run` (fuzz/targets/src/targets/provider_schema.rs), which
//! says what the target covers and checks. The main workspace's tests replay this target's corpus
//! through the same function.

#![no_main]

use capw_fuzz::targets::provider_schema;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| provider_schema::run(data));
