//! The admission corpus of `tests/admission/`: objects each mode must refuse, naming the
//! field, and objects each must admit, over what [`stored`] lists as stored (the quickstart,
//! the managed example's providers and class, and `tests/admission/stored`).
//!
//! A refused file starts with two comment lines: `# path: <field path>` and `# says: <what
//! the refusal says>`; both must be in what a user is told, whichever mode refuses it (the
//! admission checks, or a CEL rule of the CRDs with the same message).

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::bounded::output_within;

/// One object of the corpus.
#[derive(Clone, Debug)]
pub struct Case {
    /// The file.
    pub file: PathBuf,
    /// The field path the refusal must name; empty for an admitted object.
    pub path: String,
    /// What the refusal must say; empty for an admitted object.
    pub says: String,
}

impl Case {
    /// Fails the test unless `told` (what a user was told) names the field and says why.
    pub fn assert_refused_in(&self, told: &str) {
        assert!(
            told.contains(&self.path) && told.contains(&self.says),
            "{}: {told:?} should name {:?} and say {:?}",
            self.name(),
            self.path,
            self.says
        );
    }

    /// The file's name, for messages.
    pub fn name(&self) -> String {
        self.file
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned()
    }
}

fn dir(which: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../admission")
        .join(which)
}

fn cases(which: &str) -> Vec<Case> {
    crate::yaml_files(&dir(which))
        .into_iter()
        .map(|file| {
            let text = std::fs::read_to_string(&file).unwrap();
            let header = |key: &str| {
                text.lines()
                    .find_map(|l| l.strip_prefix(&format!("# {key}: ")))
                    .unwrap_or_default()
                    .to_owned()
            };
            Case {
                path: header("path"),
                says: header("says"),
                file,
            }
        })
        .collect()
}

/// The objects every mode must refuse, in file-name order.
pub fn refused() -> Vec<Case> {
    let cases = cases("refused");
    for case in &cases {
        assert!(
            !case.path.is_empty() && !case.says.is_empty(),
            "{}: needs `# path:` and `# says:` lines",
            case.name()
        );
    }
    cases
}

/// The objects every mode must admit over what [`stored`] lists.
pub fn admitted() -> Vec<Case> {
    cases("admitted")
}

/// What is stored before the corpus is tried, in the order to apply it: the quickstart
/// (`examples/quickstart`), the managed example's providers and class (its Cluster `gamma`
/// left out: the corpus creates a `gamma` of its own), and `tests/admission/stored` (a Cluster
/// of the managed class, and a control-plane provider that neither scales nor upgrades with a
/// class and a Cluster of it).
pub fn stored() -> Vec<PathBuf> {
    let examples = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let mut paths = vec![
        examples.join("quickstart"),
        examples.join("managed/00-providers.yaml"),
        examples.join("managed/10-class.yaml"),
    ];
    paths.extend(crate::yaml_files(&dir("stored")));
    paths
}

/// A local mode state directory holding what [`stored`] lists, its simcloud token granted.
pub struct LocalState {
    dir: tempfile::TempDir,
    capw: PathBuf,
}

impl LocalState {
    /// `capw apply -f` of each of [`stored`] into a new state directory with the `capw`
    /// binary at `capw`.
    pub fn with_stored(capw: &Path) -> LocalState {
        let dir = tempfile::tempdir().unwrap();
        let secrets = dir.path().join("state/secrets/simcloud");
        std::fs::create_dir_all(&secrets).unwrap();
        std::fs::write(secrets.join("token"), "admission-token").unwrap();
        let state = LocalState {
            dir,
            capw: capw.to_owned(),
        };
        for path in stored() {
            let (ok, _, err) = state.apply(&path);
            assert!(ok, "applying {}: {err}", path.display());
        }
        state
    }

    /// `capw apply -f path`: whether it succeeded, its stdout and stderr.
    pub fn apply(&self, path: &Path) -> (bool, String, String) {
        let out = output_within(
            Command::new(&self.capw)
                .arg("--state-dir")
                .arg(self.dir.path().join("state"))
                .arg("--plugin-dir")
                .arg(crate::plugin_dir())
                .arg("--cache-dir")
                .arg(self.dir.path().join("cache"))
                .arg("apply")
                .arg("-f")
                .arg(path)
                // The default logging a user gets.
                .env_remove("CAPW_LOG")
                .env("RUST_BACKTRACE", "0"),
            std::time::Duration::from_secs(120),
        );
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    /// The state file's bytes (what "nothing stored" compares).
    pub fn state_file(&self) -> PathBuf {
        self.dir.path().join("state/state.redb")
    }
}

/// What `capw apply` said of a refused object: the text after `refused: `, or, for a
/// document refused as it was parsed, after its `(<Kind> "<name>"): `.
pub fn refusal(stderr: &str) -> Option<String> {
    stderr.lines().find_map(|line| {
        let line = line.trim();
        line.split_once(" refused: ")
            .map(|(_, why)| why.to_owned())
            .or_else(|| {
                line.strip_prefix("document ")
                    .and_then(|l| l.split_once("\"): "))
                    .map(|(_, why)| why.to_owned())
            })
    })
}
