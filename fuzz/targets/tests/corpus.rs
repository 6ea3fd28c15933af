//! Every fuzz target replayed on every input of its corpus (`fuzz/corpus/<target>/`), as
//! ordinary tests of the main workspace: a target's body that no longer compiles fails the
//! build, and an input that makes it panic fails here, named by its file. No libFuzzer and no
//! instrumented build: `make fuzz` grows the corpora, these tests only replay them.

use std::collections::BTreeSet;
use std::fs;
use std::panic;
use std::path::{Path, PathBuf};
use std::thread;

use capw_fuzz::targets::{self, Replayed};

/// Stack of a thread that replays a corpus: libFuzzer runs inputs on the main thread (8 MiB
/// under the usual limit), and this build does not optimise the workspace's own crates, whose
/// frames are larger for it. An overflow would abort every test, not fail one.
const REPLAY_STACK_BYTES: usize = 64 << 20;

/// Failures listed in full in a failing test's message; the rest are counted.
const SHOWN_FAILURES: usize = 20;

/// `fuzz/`, where the libFuzzer entries and the corpora are.
fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The names of the entries in `dir` whose names end in `suffix`, without it.
fn names_in(dir: &Path, suffix: &str) -> BTreeSet<String> {
    let entries = fs::read_dir(dir).unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()));
    entries
        .map(|entry| entry.unwrap_or_else(|e| panic!("reading {}: {e}", dir.display())))
        .filter_map(|entry| {
            let name = entry.file_name().into_string().ok()?;
            name.strip_suffix(suffix).map(str::to_owned)
        })
        .collect()
}

#[test]
fn every_fuzz_target_and_every_corpus_is_replayed() {
    let replayed: BTreeSet<String> = targets::ALL.iter().map(|(n, _)| (*n).to_owned()).collect();
    let entries = names_in(&fuzz_dir().join("fuzz_targets"), ".rs");
    assert_eq!(
        entries, replayed,
        "fuzz/fuzz_targets/ and capw_fuzz::targets::ALL name other targets"
    );
    let corpora = names_in(&fuzz_dir().join("corpus"), "");
    let orphans: Vec<&String> = corpora.difference(&replayed).collect();
    assert!(
        orphans.is_empty(),
        "corpora of no target in fuzz/corpus/: {orphans:?}"
    );
}

/// What a target made of its corpus.
struct Replay {
    target: &'static str,
    /// Files in its corpus.
    files: usize,
    ran: usize,
    rejected: usize,
    /// `file: message` of each input that panicked.
    panicked: Vec<String>,
}

/// Replays every file of `target`'s corpus, and the empty input libFuzzer starts with.
fn replay_corpus(target: &'static str, replay: fn(&[u8]) -> Replayed) -> Replay {
    let dir = fuzz_dir().join("corpus").join(target);
    let mut inputs: Vec<(String, Vec<u8>)> = vec![("(the empty input)".to_owned(), Vec::new())];
    if dir.is_dir() {
        for name in names_in(&dir, "") {
            let file = dir.join(&name);
            if !file.is_file() {
                continue;
            }
            let bytes =
                fs::read(&file).unwrap_or_else(|e| panic!("reading {}: {e}", file.display()));
            inputs.push((format!("fuzz/corpus/{target}/{name}"), bytes));
        }
    }
    let mut outcome = Replay {
        target,
        files: inputs.len() - 1,
        ran: 0,
        rejected: 0,
        panicked: Vec::new(),
    };
    for (name, bytes) in &inputs {
        match panic::catch_unwind(|| replay(bytes)) {
            Ok(Replayed::Ran) => outcome.ran += 1,
            Ok(Replayed::Rejected) => outcome.rejected += 1,
            Err(payload) => {
                // What `panic!` carries: a `String` when formatted, a `&str` when not.
                let message = (payload.downcast_ref::<String>().map(String::as_str))
                    .or_else(|| payload.downcast_ref::<&str>().copied())
                    .unwrap_or("a panic without a message");
                outcome.panicked.push(format!("{name}: {message}"));
            }
        }
    }
    outcome
}

#[test]
fn every_corpus_input_runs_through_its_target_without_a_panic() {
    // One thread per target: the corpora hold thousands of inputs between them.
    let replays: Vec<Replay> = thread::scope(|scope| {
        let running: Vec<_> = (targets::ALL.iter())
            .map(|&(target, replay)| {
                thread::Builder::new()
                    .name(format!("replay-{target}"))
                    .stack_size(REPLAY_STACK_BYTES)
                    .spawn_scoped(scope, move || replay_corpus(target, replay))
                    .expect("starting a replay thread")
            })
            .collect();
        (running.into_iter())
            .map(|thread| thread.join().expect("a replay thread ended early"))
            .collect()
    });

    let mut failures = Vec::new();
    for replay in &replays {
        println!(
            "{}: {} files and the empty input: {} ran, {} rejected undecoded, {} panicked",
            replay.target,
            replay.files,
            replay.ran,
            replay.rejected,
            replay.panicked.len()
        );
        failures.extend(replay.panicked.iter().cloned());
        if replay.files > 0 && replay.ran == 0 {
            failures.push(format!(
                "{}: no input of its corpus decodes into the target's input",
                replay.target
            ));
        }
    }
    let hidden = failures.len().saturating_sub(SHOWN_FAILURES);
    failures.truncate(SHOWN_FAILURES);
    if hidden > 0 {
        failures.push(format!("… and {hidden} more"));
    }
    assert!(
        failures.is_empty(),
        "fuzz inputs that fail their target:\n{}",
        failures.join("\n")
    );
}
