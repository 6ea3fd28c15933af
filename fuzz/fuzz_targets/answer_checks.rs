//! libFuzzer's entry to the `answer_checks` target: it decodes the input and calls
//! `capw_fuzz::targets::answer_checks::run` (fuzz/targets/src/targets/answer_checks.rs), which says
//! what the target covers and checks. The main workspace's tests replay this target's corpus
//! through the same function.

#![no_main]

use capw_fuzz::answers::Input;
use capw_fuzz::targets::answer_checks;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: Input| answer_checks::run(input));
