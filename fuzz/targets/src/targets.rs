//! The fuzz targets, one module per entry of `fuzz/fuzz_targets/` and directory of
//! `fuzz/corpus/`, named alike.
//!
//! Each module has `run`, the target's body, which libFuzzer's entry calls with the input it
//! decoded; and `replay`, which decodes a corpus file's bytes as that entry does and runs the
//! body on them. Both builds thus run the same code: the fuzzer's, instrumented, in `fuzz/`;
//! the main workspace's, in this crate's tests, on every input of every corpus.

use arbitrary::{Arbitrary, Unstructured};

pub mod answer_checks;
pub mod manifest;
pub mod provider_answers;
pub mod provider_schema;
pub mod topology;

/// A target's [`replay`](manifest::replay): a corpus file's bytes in, what became of them out.
pub type Replay = fn(&[u8]) -> Replayed;

/// Every target, by the name of its entry in `fuzz/fuzz_targets/` and of its corpus, with its
/// [`replay`](manifest::replay).
pub const ALL: &[(&str, Replay)] = &[
    ("answer_checks", answer_checks::replay),
    ("manifest", manifest::replay),
    ("provider_answers", provider_answers::replay),
    ("provider_schema", provider_schema::replay),
    ("topology", topology::replay),
];

/// What became of an input replayed through its target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Replayed {
    /// Decoded, and the target's body ran to its end.
    Ran,
    /// Refused before the body, as libFuzzer's entry refuses it: too short for the target's
    /// input type, or not decodable as one.
    Rejected,
}

/// Decodes a fuzzer's input as `libfuzzer_sys::fuzz_target!` decodes the input of a target
/// that takes a `T`: `None` (the entry returns "reject") when the bytes are fewer than `T`'s
/// least size, or when `T::arbitrary_take_rest` fails.
///
/// # Caveats
///
/// This repeats libfuzzer-sys 0.4's decoding (the `fuzz_target!` arm for a typed input); a
/// release of libfuzzer-sys that decodes otherwise would replay the corpus as other inputs.
pub fn decode<'a, T: Arbitrary<'a>>(bytes: &'a [u8]) -> Option<T> {
    if bytes.len() < T::size_hint(0).0 {
        return None;
    }
    T::arbitrary_take_rest(Unstructured::new(bytes)).ok()
}
