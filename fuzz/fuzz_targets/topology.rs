//! libFuzzer's entry to the `topology` target: it decodes the input and calls
//! `capw_fuzz::targets::topology::run` (fuzz/targets/src/targets/topology.rs), which says what the
//! target covers and checks. The main workspace's tests replay this target's corpus through the
//! same function.

#![no_main]

use capw_fuzz::targets::topology;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| topology::run(data));
