//! `capw plugin new` for every language: the starter builds with its own instructions, loads
//! as the provider it says it is and passes the conformance suite; so do the examples it is
//! made from.
//!
//! The builds need the toolchains of `make toolchains`; `make test` passes their paths in the
//! environment (`WASM_TOOLS`, `WIT_BINDGEN`, `COMPONENTIZE_PY`, ...), which the starters'
//! Makefiles read. `capw plugin new` looks for the same tools and warns of the missing ones.

use std::path::{Path, PathBuf};
use std::process::Command;

use sha2::{Digest, Sha256};

fn capw() -> Command {
    Command::new(env!("CARGO_BIN_EXE_capw"))
}

fn run(command: &mut Command) -> String {
    run_with_stderr(command).0
}

/// Runs `command`, which must succeed, and returns its stdout and stderr.
fn run_with_stderr(command: &mut Command) -> (String, String) {
    let output = command
        .output()
        .unwrap_or_else(|e| panic!("{command:?}: {e}"));
    let (stdout, stderr) = (
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    );
    assert!(
        output.status.success(),
        "{command:?} failed:\n{stdout}\n{stderr}"
    );
    (stdout, stderr)
}

/// `capw plugin new NAME --lang LANG --dir DIR`, with what it prints on stderr.
fn new_starter(dir: &Path, name: &str, lang: &str, env: &[(String, String)]) -> String {
    new_point(dir, name, lang, "bootstrap", Some(&sdk()), env)
}

/// `capw plugin new NAME --lang LANG --point POINT --dir DIR [--sdk SDK]`, which must
/// succeed, with what it prints on stderr.
fn new_point(
    dir: &Path,
    name: &str,
    lang: &str,
    point: &str,
    sdk: Option<&Path>,
    env: &[(String, String)],
) -> String {
    let mut command = capw();
    command
        .args([
            "plugin", "new", name, "--lang", lang, "--point", point, "--dir",
        ])
        .arg(dir)
        .envs(env.iter().map(|(k, v)| (k, v)));
    if let Some(sdk) = sdk {
        command.arg("--sdk").arg(sdk);
    }
    run_with_stderr(&mut command).1
}

/// The build's target directory, where `make toolchains` writes toolchains.env and the starter
/// matrix keeps what it built.
fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target"))
}

/// The variables of `toolchains.env`, which `make toolchains` writes into the target
/// directory: the paths of the tools the starters' Makefiles read.
fn toolchains_env() -> Vec<(String, String)> {
    let file = target_dir().join("toolchains.env");
    let text = std::fs::read_to_string(&file)
        .unwrap_or_else(|e| panic!("{}: {e}; run `make toolchains`", file.display()));
    text.lines()
        .filter_map(|line| line.split_once('='))
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect()
}

/// The versions `scripts/toolchains.sh` pins, by its variable's name.
fn pinned(name: &str) -> String {
    let script = include_str!("../../../../scripts/toolchains.sh");
    script
        .lines()
        .find_map(|line| line.strip_prefix(&format!("{name}=")))
        .unwrap_or_else(|| panic!("toolchains.sh pins no {name}"))
        .to_owned()
}

fn sdk() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../sdk")
}

/// Scaffolds `name` in `lang` for `point` (against the checkout's SDK, or the copy `capw`
/// writes without `--sdk`), builds it as its README says, runs its unit tests and returns the
/// component.
fn scaffold(dir: &Path, name: &str, lang: &str, point: &str, sdk: Option<&Path>) -> PathBuf {
    let project = dir.join(name);
    // The toolchains the build below needs are there: `capw plugin new` finds them too.
    let stderr = new_point(&project, name, lang, point, sdk, &toolchains_env());
    assert!(!stderr.contains("warning"), "{lang} {point}: {stderr}");
    // The C starters carry the contract; the others build through their SDK.
    assert_eq!(
        project.join("wit/worlds.wit").exists(),
        lang == "c",
        "{lang} {point}"
    );
    // Without a checkout, the SDK comes with the starter.
    assert_eq!(
        project.join("capw-sdk").is_dir(),
        sdk.is_none() && lang != "c" && lang != "rust",
        "{lang} {point}"
    );
    let readme = std::fs::read_to_string(project.join("README.md")).unwrap();
    assert!(
        readme.contains(&format!("A capw {point} provider in")),
        "{readme}"
    );
    let component = project.join("provider.wasm");
    if lang == "rust" {
        // One target directory for every run, so the SDK's dependencies build once.
        let target = std::env::var_os("CARGO_TARGET_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| dir.join("target"))
            .join("scaffold");
        run(Command::new(env!("CARGO"))
            .args(["build", "--profile", "plugin", "--target", "wasm32-wasip2"])
            .env("CARGO_TARGET_DIR", &target)
            .current_dir(&project));
        let built = target
            .join("wasm32-wasip2/plugin")
            .join(format!("{}.wasm", name.replace('-', "_")));
        std::fs::copy(&built, &component).unwrap();
        run(Command::new(env!("CARGO"))
            .arg("test")
            .env("CARGO_TARGET_DIR", &target)
            .current_dir(&project));
    } else {
        let env = toolchains_env();
        let kept = kept_component(&project, name, &env);
        if kept.exists() {
            std::fs::copy(&kept, &component).unwrap();
        } else {
            run(Command::new("make")
                .arg("OUT=provider.wasm")
                .envs(env.iter().map(|(k, v)| (k, v)))
                .current_dir(&project));
            keep_component(&component, &kept, name);
        }
        if lang != "c" {
            run(Command::new("make")
                .arg("test")
                .envs(env.iter().map(|(k, v)| (k, v)))
                .current_dir(&project));
        }
    }
    component
}

// What the starter matrix keeps between runs, in the target directory (starters/): each
// starter's component under the digest of everything it is made from, and the compiled code of
// the components it loads (capw's own compile cache). A run whose starters, SDKs and pinned
// toolchains are those of the last one builds and compiles nothing: componentize-py and
// componentize-js take 8 to 10 s of CPU per starter, Cranelift as much again for each
// component, about eight CPU-minutes a run otherwise. The unit tests, `capw plugin inspect` and
// `capw plugin test` run every time. The Rust starters are left to Cargo's own cache: their
// inputs include crates the build resolves, which no file here names.

/// Where starters' components built by an earlier run are kept.
fn kept_dir() -> PathBuf {
    target_dir().join("starters")
}

/// The compile cache (`capw --cache-dir`) of every component the matrix and the examples'
/// conformance tests load.
fn compile_cache() -> PathBuf {
    kept_dir().join("compiled")
}

/// Where the component of the starter in `project` is kept: under the sha256 of its files as
/// `capw plugin new` wrote them (the checkout's path in them made neutral, so that a clone
/// elsewhere finds it too), of the SDK it builds against and of toolchains.env, which names
/// each pinned tool by its version.
fn kept_component(project: &Path, name: &str, env: &[(String, String)]) -> PathBuf {
    let checkout = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let neutral = [
        checkout.canonicalize().unwrap().display().to_string(),
        checkout.display().to_string(),
    ];
    let mut digest = Sha256::new();
    hash_tree(&mut digest, project, project, &neutral);
    // The SDK the starter's Makefile builds against, when it is not the copy inside it.
    let makefile = std::fs::read_to_string(project.join("Makefile")).unwrap_or_default();
    let sdk = makefile
        .lines()
        .find_map(|line| line.strip_prefix("SDK ?="))
        .map(|path| Path::new(path.trim()));
    if let Some(sdk) = sdk.filter(|sdk| sdk.is_absolute()) {
        hash_tree(&mut digest, sdk, sdk, &neutral);
    }
    for (key, value) in env {
        digest.update(format!("{key}={value}\n"));
    }
    kept_dir().join(format!("{name}-{}.wasm", hex::encode(digest.finalize())))
}

/// Feeds every file under `dir` (by its path relative to `root`, in order) into `digest`, with
/// each string of `neutral` in its text replaced; what a build or a test writes is left out.
fn hash_tree(digest: &mut Sha256, root: &Path, dir: &Path, neutral: &[String]) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        let file_name = path.file_name().unwrap().to_string_lossy();
        if ["provider.wasm", "__pycache__", "node_modules", "target"].contains(&&*file_name) {
            continue;
        }
        if path.is_dir() {
            hash_tree(digest, root, &path, neutral);
            continue;
        }
        let mut bytes = std::fs::read(&path).unwrap();
        if let Ok(text) = std::str::from_utf8(&bytes) {
            let mut text = text.to_owned();
            for n in neutral {
                text = text.replace(n.as_str(), "<checkout>");
            }
            bytes = text.into_bytes();
        }
        let relative = path.strip_prefix(root).unwrap().display().to_string();
        digest.update(format!("{relative}\0{}\0", bytes.len()));
        digest.update(&bytes);
    }
}

/// Keeps `component` as `kept` (written aside and renamed into place), and drops what earlier
/// runs kept for the starter `name` under other digests: one component per starter.
fn keep_component(component: &Path, kept: &Path, name: &str) {
    let dir = kept.parent().unwrap();
    std::fs::create_dir_all(dir).unwrap();
    let aside = kept.with_extension(format!("wasm.tmp-{}", std::process::id()));
    std::fs::copy(component, &aside).unwrap();
    std::fs::rename(&aside, kept).unwrap();
    let prefix = format!("{name}-");
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let file_name = path.file_name().unwrap().to_string_lossy().into_owned();
        if path != kept
            && file_name.ends_with(".wasm")
            && file_name
                .strip_prefix(&prefix)
                .is_some_and(|rest| rest.len() == 64 + ".wasm".len())
        {
            let _ = std::fs::remove_file(&path);
        }
    }
}

/// A kept component is found again only for the same starter, SDK and toolchains: a change to
/// any of them builds again (else a broken SDK would hide behind an old component).
#[test]
fn a_kept_component_is_found_again_only_for_the_same_inputs() {
    let dir = tempfile::tempdir().unwrap();
    let sdk = dir.path().join("sdk");
    std::fs::create_dir_all(sdk.join("capw")).unwrap();
    std::fs::write(sdk.join("capw/__init__.py"), "version = 1\n").unwrap();
    let write_project = |at: &Path| {
        std::fs::create_dir_all(at).unwrap();
        std::fs::write(at.join("Makefile"), format!("SDK ?= {}\n", sdk.display())).unwrap();
        std::fs::write(at.join("app.py"), "print('hi')\n").unwrap();
        // What the build and the unit tests write is not an input.
        std::fs::create_dir_all(at.join("__pycache__")).unwrap();
        std::fs::write(at.join("__pycache__/app.pyc"), at.display().to_string()).unwrap();
    };
    let env = vec![("COMPONENTIZE_PY".to_owned(), "/tools/cpy-0.25.1".to_owned())];
    let (one, two) = (dir.path().join("one"), dir.path().join("two"));
    write_project(&one);
    write_project(&two);
    let first = kept_component(&one, "acme", &env);
    assert_eq!(
        first,
        kept_component(&two, "acme", &env),
        "the same files elsewhere"
    );

    std::fs::write(two.join("app.py"), "print('bye')\n").unwrap();
    assert_ne!(
        first,
        kept_component(&two, "acme", &env),
        "a starter's file changed"
    );
    let changed_tools = vec![("COMPONENTIZE_PY".to_owned(), "/tools/cpy-0.26.0".to_owned())];
    assert_ne!(
        first,
        kept_component(&one, "acme", &changed_tools),
        "a tool's version changed"
    );
    std::fs::write(sdk.join("capw/__init__.py"), "version = 2\n").unwrap();
    assert_ne!(first, kept_component(&one, "acme", &env), "the SDK changed");
}

/// Every point `lang` has a starter for: each builds, passes its unit tests, loads as the
/// provider of that one point it says it is, and passes the conformance suite.
fn check(lang: &str, points: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let cache = compile_cache();
    for point in points {
        let name = format!("acme-{lang}-{point}");
        let component = scaffold(dir.path(), &name, lang, point, Some(&sdk()));
        let inspect = run(capw()
            .arg("--cache-dir")
            .arg(&cache)
            .args(["plugin", "inspect", "-o", "json"])
            .arg(&component));
        let info: serde_json::Value = serde_json::from_str(&inspect).unwrap();
        assert_eq!(info["name"], name.as_str(), "{inspect}");
        assert_eq!(
            info["extensionPoints"],
            serde_json::json!([point]),
            "{inspect}"
        );
        conforms(&component, &cache);
    }
}

const POINTS: [&str; 4] = [
    "infrastructure",
    "bootstrap",
    "control-plane",
    "lifecycle-hooks",
];

/// `capw plugin test` passes on `component` with its default config.
fn conforms(component: &Path, cache: &Path) {
    let report = run(capw()
        .arg("--cache-dir")
        .arg(cache)
        .args(["plugin", "test"])
        .arg(component));
    assert!(report.contains(" 0 failed"), "{report}");
}

/// The example providers of plugins/other-languages, as `make examples` built them, pass the
/// conformance suite.
#[test]
fn the_examples_conform() {
    for lang in ["c", "python", "js", "go"] {
        conforms(
            &capw_test_support::component_path(&format!("capw_example_{lang}")),
            &compile_cache(),
        );
    }
}

/// The providers written with the SDKs in other languages, as `make examples` built them,
/// pass the conformance suite with the configs beside their sources: py-control-plane
/// (Python, control plane) and js-hooks (JavaScript, lifecycle hooks).
#[test]
fn the_sdk_providers_conform() {
    let cache = compile_cache();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../plugins/other-languages");
    for (component, dir) in [
        ("capw_py_control_plane", "py-control-plane"),
        ("capw_js_hooks", "js-hooks"),
    ] {
        let report = run(capw()
            .arg("--cache-dir")
            .arg(&cache)
            .args(["plugin", "test"])
            .arg(capw_test_support::component_path(component))
            .arg("--config")
            .arg(root.join(dir).join("conformance.json")));
        assert!(report.contains(" 0 failed"), "{component}: {report}");
        assert!(!report.contains(" 0 passed"), "{component}: {report}");
    }
}

// The starter matrix: four points in each language with an SDK, bootstrap and lifecycle hooks
// in C (18 starters), one test per language so that two run at a time.

#[test]
fn the_c_starters_build_and_conform() {
    check("c", &["bootstrap", "lifecycle-hooks"]);
}

#[test]
fn the_python_starters_build_and_conform() {
    check("python", &POINTS);
}

#[test]
fn the_js_starters_build_and_conform() {
    check("js", &POINTS);
}

#[test]
fn the_go_starters_build_and_conform() {
    check("go", &POINTS);
}

#[test]
fn the_rust_starters_build_and_conform() {
    check("rust", &POINTS);
}

/// Outside a capw checkout (no `--sdk`), a starter in a language with an SDK gets a copy of it
/// and builds on its own.
#[test]
fn a_starter_without_a_checkout_builds_with_its_copy_of_the_sdk() {
    let dir = tempfile::tempdir().unwrap();
    for lang in ["python", "js", "go"] {
        let name = format!("acme-{lang}-alone");
        let component = scaffold(dir.path(), &name, lang, "lifecycle-hooks", None);
        conforms(&component, &compile_cache());
    }
}

#[test]
fn c_has_no_starter_for_infrastructure_or_control_plane_and_says_why() {
    let dir = tempfile::tempdir().unwrap();
    for point in ["infrastructure", "control-plane"] {
        let project = dir.path().join(point);
        let output = capw()
            .args([
                "plugin", "new", "acme", "--lang", "c", "--point", point, "--dir",
            ])
            .arg(&project)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success());
        assert!(
            stderr.contains(&format!("no C starter for {point}")),
            "{stderr}"
        );
        assert!(stderr.contains("C has no capw SDK"), "{stderr}");
        assert!(!project.exists(), "{point}: nothing is written");
    }
}

#[test]
fn a_starter_is_never_written_over_a_project() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("keep.txt"), "mine").unwrap();
    let output = capw()
        .args(["plugin", "new", "acme", "--lang", "c", "--dir"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("exists and is not empty"), "{stderr}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("keep.txt")).unwrap(),
        "mine"
    );
}

#[test]
fn a_starter_whose_tool_is_missing_is_written_with_a_warning_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty-path");
    std::fs::create_dir(&empty).unwrap();
    let project = dir.path().join("acme");
    let output = capw()
        .args(["plugin", "new", "acme", "--lang", "python", "--dir"])
        .arg(&project)
        .env("PATH", &empty)
        .env_remove("COMPONENTIZE_PY")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(project.join("app.py").exists() && project.join("README.md").exists());
    let version = pinned("COMPONENTIZE_PY");
    for expected in [
        "warning: the Python starter is written, but its build needs tools not found here".into(),
        format!(
            "componentize-py {version} (componentize-py is not on PATH and COMPONENTIZE_PY is not set)"
        ),
        format!("pip install componentize-py=={version}"),
    ] {
        assert!(stderr.contains(&expected), "no {expected:?} in:\n{stderr}");
    }

    // A make variable naming a file that is not there is named as such.
    let project = dir.path().join("acme-go");
    let output = capw()
        .args(["plugin", "new", "acme", "--lang", "go", "--dir"])
        .arg(&project)
        .env("GO_PKG", dir.path().join("no-such-go-pkg"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(stderr.contains("no-such-go-pkg does not exist"), "{stderr}");
}

#[test]
fn the_tools_of_toolchains_env_are_found_for_every_language() {
    let dir = tempfile::tempdir().unwrap();
    for lang in ["rust", "c", "python", "js", "go"] {
        let stderr = new_starter(&dir.path().join(lang), "acme", lang, &toolchains_env());
        assert!(stderr.is_empty(), "{lang}: {stderr}");
    }
}

/// Each starter's README names the versions `scripts/toolchains.sh` pins and the command that
/// installs them; every make variable it names is one its Makefile reads.
#[test]
fn every_readme_names_its_pinned_toolchain() {
    // The Python package of wasm-tools adds a fourth number to wasm-tools' own version.
    let wasm_tools = pinned("WASM_TOOLS").trim_end_matches(".0").to_owned();
    let wit_bindgen = pinned("WIT_BINDGEN");
    let expected = [
        ("rust", vec!["rustup target add wasm32-wasip2".to_owned()]),
        (
            "c",
            vec![
                format!("wit-bindgen-cli@{wit_bindgen}"),
                format!("wasm-tools@{wasm_tools}"),
                "wasi-libc".into(),
            ],
        ),
        (
            "python",
            vec![format!(
                "pip install componentize-py=={}",
                pinned("COMPONENTIZE_PY")
            )],
        ),
        (
            "js",
            vec![
                format!(
                    "@bytecodealliance/componentize-js@{}",
                    pinned("COMPONENTIZE_JS")
                ),
                format!("@bytecodealliance/wizer@{}", pinned("WIZER")),
            ],
        ),
        (
            "go",
            vec![
                format!("wit-bindgen-cli@{wit_bindgen}"),
                format!("wasm-tools@{wasm_tools}"),
                format!("wit-bindgen-go-{wit_bindgen}"),
                pinned("GO_TOOLCHAIN"),
            ],
        ),
    ];
    let dir = tempfile::tempdir().unwrap();
    for (lang, needles) in expected {
        let project = dir.path().join(lang);
        new_starter(&project, "acme", lang, &[]);
        let readme = std::fs::read_to_string(project.join("README.md")).unwrap();
        for needle in needles {
            assert!(
                readme.contains(&needle),
                "{lang}: no {needle:?} in\n{readme}"
            );
        }
        let makefile = std::fs::read_to_string(project.join("Makefile")).unwrap_or_default();
        for variable in readme.split("make variable `").skip(1) {
            let variable = variable.split('`').next().unwrap_or_default();
            assert!(
                makefile.contains(&format!("{variable} ?=")),
                "{lang}: the README names {variable}, which the Makefile does not read"
            );
        }
    }
}
