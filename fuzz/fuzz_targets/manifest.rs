//! libFuzzer's entry to the `manifest` target: it decodes the input and calls
//! `capw_fuzz::targets::manifest::run` (fuzz/targets/src/targets/manifest.rs), which says what the
//! target covers and checks. The main workspace's tests replay this target's corpus through the
//! same function.

#![no_main]

use capw_fuzz::targets::manifest;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| manifest::run(text));
