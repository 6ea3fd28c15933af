//! libFuzzer's entry to the `provider_answers` target: it decodes the input and calls
//! `capw_fuzz::targets::provider_answers::run` (fuzz/targets/src/targets/provider_answers.rs),
//! which says what the target covers and checks. The main workspace's tests replay this target's
//! corpus through the same function.

#![no_main]

use capw_fuzz::targets::provider_answers::{self, Answers};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|answers: Answers| provider_answers::run(answers));
