//! `capw plugin new`: a starter provider for one extension point in one of the supported
//! languages, buildable as it is.
//!
//! The Rust, Go, Python and JavaScript starters are written with capw's SDK of their language,
//! one per extension point, from the templates in `host/cli/templates/<lang>/` (the files of
//! `common/`, then those of the point's directory); every language's starter of a point does
//! the same work, so that they can be compared. A Go, Python or JavaScript starter builds
//! against the SDK of the checkout `--sdk` names, or else against a copy of the SDK, from this
//! binary, written into the project (`capw-sdk/`). C has no SDK: its starters bind the bare
//! contract (0.1, copied into `wit/`), for bootstrap (the example of `plugins/other-languages/c`)
//! and lifecycle hooks. Each starter gets a README saying what the build needs, how to build
//! and how to test. When a tool the build needs is not found, the starter is written all the
//! same, with a warning that names the tool and the command that installs it ([`toolchain`]).

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use include_dir::{Dir, DirEntry, include_dir};

use crate::cli::{Lang, NewArgs, Point};

mod toolchain;

/// One file of a starter: its path inside the project and its text.
type File = (&'static str, &'static str);

/// The starters' templates, by language and point.
static TEMPLATES: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/templates");

/// The SDKs a starter outside a capw checkout gets a copy of.
static SDK_GO: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/../../sdk/go");
static SDK_PYTHON: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/../../sdk/python");
static SDK_JS: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/../../sdk/js");

/// Where a starter's copy of its SDK goes, inside the project.
const SDK_COPY: &str = "capw-sdk";

/// The contract, copied into the C starters so that they build on their own: version 0.1,
/// which they implement.
const WIT: &[File] = &[
    (
        "wit/bootstrap.wit",
        include_str!("../../../wit/0.1/bootstrap.wit"),
    ),
    (
        "wit/control-plane.wit",
        include_str!("../../../wit/0.1/control-plane.wit"),
    ),
    ("wit/host.wit", include_str!("../../../wit/0.1/host.wit")),
    (
        "wit/infrastructure.wit",
        include_str!("../../../wit/0.1/infrastructure.wit"),
    ),
    (
        "wit/lifecycle-hooks.wit",
        include_str!("../../../wit/0.1/lifecycle-hooks.wit"),
    ),
    (
        "wit/metadata.wit",
        include_str!("../../../wit/0.1/metadata.wit"),
    ),
    ("wit/types.wit", include_str!("../../../wit/0.1/types.wit")),
    (
        "wit/worlds.wit",
        include_str!("../../../wit/0.1/worlds.wit"),
    ),
];

/// What every C starter builds with: the example's JSON reader and its Makefile, whose world
/// is set per point.
const C_COMMON: &[File] = &[
    (
        "json.c",
        include_str!("../../../plugins/other-languages/c/json.c"),
    ),
    (
        "json.h",
        include_str!("../../../plugins/other-languages/c/json.h"),
    ),
];
const C_MAKEFILE: &str = include_str!("../../../plugins/other-languages/c/Makefile");
const C_BOOTSTRAP: &str = include_str!("../../../plugins/other-languages/c/provider.c");

const README: &str = include_str!("../templates/README.md");

impl Lang {
    /// The name of the language's directory under `templates/` and in `--sdk`'s directory.
    fn dir(self) -> &'static str {
        match self {
            Lang::Rust => "rust",
            Lang::C => "c",
            Lang::Python => "python",
            Lang::Js => "js",
            Lang::Go => "go",
        }
    }

    /// The copy of the language's SDK a starter gets when no checkout is named.
    fn sdk_copy(self) -> Option<&'static Dir<'static>> {
        match self {
            Lang::Go => Some(&SDK_GO),
            Lang::Python => Some(&SDK_PYTHON),
            Lang::Js => Some(&SDK_JS),
            Lang::Rust | Lang::C => None,
        }
    }

    fn build_command(self) -> &'static str {
        match self {
            Lang::Rust => {
                "cargo build --profile plugin --target wasm32-wasip2 && cp target/wasm32-wasip2/plugin/*.wasm provider.wasm"
            }
            _ => "make OUT=provider.wasm",
        }
    }

    /// How the starter's unit tests run, natively; `None` for C, whose starter has none.
    fn test_command(self) -> Option<&'static str> {
        match self {
            Lang::Rust => Some("cargo test"),
            Lang::C => None,
            Lang::Python | Lang::Js | Lang::Go => Some("make test"),
        }
    }

    /// Where the contract the starter implements comes from, for its README.
    fn contract(self) -> &'static str {
        match self {
            Lang::Rust => "`capw:provider@0.3.0`, through capw-sdk",
            Lang::Go | Lang::Python | Lang::Js => {
                "`capw:provider@0.3.0`, through capw's SDK (the make variable `SDK` names it)"
            }
            Lang::C => "in `wit/` (`capw:provider@0.1.0`, served beside 0.2 and 0.3), bound bare",
        }
    }

    fn guide(self) -> &'static str {
        match self {
            Lang::Rust => "writing-a-provider-rust.md",
            Lang::Go => "writing-a-provider-go.md",
            Lang::Python => "writing-a-provider-python.md",
            Lang::Js => "writing-a-provider-js.md",
            Lang::C => "writing-a-provider-other-languages.md",
        }
    }
}

impl Point {
    /// What a provider of the point does, for the README.
    fn summary(self) -> &'static str {
        match self {
            Point::Infrastructure => {
                "the cluster's endpoint and failure domains, and machines that are stateless here \
                 (a real provider calls its cloud)"
            }
            Point::Bootstrap => {
                "cluster secrets, cloud-config for each machine, an admin kubeconfig"
            }
            Point::ControlPlane => {
                "the next safe step of a control plane of machines, scaled up and down one \
                 machine at a time"
            }
            Point::LifecycleHooks => {
                "deletion protection, holding the deletion of a protected cluster"
            }
        }
    }

    /// The world a C starter of the point exports, or why C has no starter for it.
    fn c_world(self) -> anyhow::Result<&'static str> {
        match self {
            Point::Bootstrap => Ok("bootstrap-provider"),
            Point::LifecycleHooks => Ok("lifecycle-hooks-provider"),
            Point::Infrastructure | Point::ControlPlane => bail!(
                "no C starter for {point}: C has no capw SDK, and its starters show how to bind \
                 the bare contract for the two small points, bootstrap and lifecycle-hooks; \
                 write a{n} {point} provider with the SDK of Rust, Go, Python or JavaScript \
                 (--lang rust|go|python|js)",
                point = self.name(),
                n = if self == Point::Infrastructure {
                    "n"
                } else {
                    ""
                },
            ),
        }
    }
}

/// Checks a provider name the way the host does: 1-63 characters of `a-z`, `0-9` and `-`,
/// starting with a letter.
fn check_name(name: &str) -> anyhow::Result<()> {
    let ok = (1..=63).contains(&name.len())
        && name.starts_with(|c: char| c.is_ascii_lowercase())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
    if !ok {
        bail!(
            "provider name `{name}`: must be 1-63 characters of a-z, 0-9 and '-', starting with a letter"
        );
    }
    Ok(())
}

/// The text of a template for the provider `name`.
fn render(text: &str, name: &str, sdk: &str) -> String {
    text.replace("{{name}}", name)
        .replace("{{crate}}", &name.replace('-', "_"))
        .replace("{{sdk}}", sdk)
}

/// Every file under `dir`, with its path relative to `dir`, in a stable order.
fn files_under(dir: &'static Dir<'static>) -> Vec<(PathBuf, &'static [u8])> {
    let mut out = Vec::new();
    let mut stack = vec![dir];
    while let Some(next) = stack.pop() {
        for entry in next.entries() {
            match entry {
                DirEntry::Dir(d) => stack.push(d),
                DirEntry::File(f) => {
                    let path = f.path().strip_prefix(dir.path()).unwrap_or(f.path());
                    out.push((path.to_path_buf(), f.contents()));
                }
            }
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// Whether `path` is a cache a build, a test run or a linter left (Python's bytecode, npm's
/// modules, hidden directories such as `.ruff_cache`): never part of a starter, whatever the
/// tree `capw` was built from held.
fn is_cache(path: &Path) -> bool {
    path.components().any(|c| {
        let c = c.as_os_str().to_string_lossy();
        c == "__pycache__" || c == "node_modules" || c.starts_with('.')
    }) || path.extension().is_some_and(|e| e == "pyc")
}

/// Whether a file of an SDK belongs in a starter's copy: the SDK's own tests, examples and
/// caches stay out.
fn in_sdk_copy(path: &Path) -> bool {
    // `build/`: what an SDK's own make targets leave there (sdk/js's example component, 13 MB).
    let skipped = ["tests", "test", "examples", "build"];
    !is_cache(path)
        && !path
            .components()
            .any(|c| skipped.iter().any(|s| c.as_os_str() == *s))
}

/// The starter's files, each with its path in the project and its text, placeholders not yet
/// filled in.
fn starter_files(lang: Lang, point: Point) -> anyhow::Result<Vec<(PathBuf, String)>> {
    let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).into_owned();
    if lang == Lang::C {
        let world = point.c_world()?;
        let provider = match point {
            Point::Bootstrap => C_BOOTSTRAP.replace("c-example", "{{name}}"),
            _ => {
                let file = TEMPLATES
                    .get_file(format!("c/{}/provider.c", point.name()))
                    .context("the C starter's template is missing from this build")?;
                text(file.contents())
            }
        };
        let makefile =
            C_MAKEFILE.replace("WORLD := bootstrap-provider", &format!("WORLD := {world}"));
        return Ok((WIT.iter().chain(C_COMMON))
            .map(|(path, text)| (PathBuf::from(path), (*text).to_owned()))
            .chain([
                (PathBuf::from("provider.c"), provider),
                (PathBuf::from("Makefile"), makefile),
            ])
            .collect());
    }
    let mut files: Vec<(PathBuf, String)> = Vec::new();
    for part in ["common", point.name()] {
        let dir = TEMPLATES
            .get_dir(format!("{}/{part}", lang.dir()))
            .with_context(|| {
                format!(
                    "no {} starter for {} in this build of capw",
                    lang.label(),
                    point.name()
                )
            })?;
        for (path, bytes) in files_under(dir).into_iter().filter(|(p, _)| !is_cache(p)) {
            // A point's file wins over the common one of the same path.
            files.retain(|(p, _)| *p != path);
            files.push((path, text(bytes)));
        }
    }
    Ok(files)
}

/// Writes the starter and returns its directory.
pub fn run(args: NewArgs) -> anyhow::Result<PathBuf> {
    check_name(&args.name)?;
    let (lang, point) = (args.lang, args.point);
    let files = starter_files(lang, point)?;
    let dir = args.dir.unwrap_or_else(|| PathBuf::from(&args.name));
    if dir.exists()
        && dir
            .read_dir()
            .with_context(|| format!("reading {}", dir.display()))?
            .next()
            .is_some()
    {
        bail!("{}: exists and is not empty", dir.display());
    }
    let checkout = match &args.sdk {
        Some(path) => {
            Some(std::path::absolute(path).with_context(|| format!("--sdk {}", path.display()))?)
        }
        None => None,
    };
    if let Some(sdk) = &checkout {
        let own = if lang == Lang::Rust {
            sdk.clone()
        } else {
            sdk.join(lang.dir())
        };
        if lang != Lang::C && !own.is_dir() {
            bail!(
                "--sdk {}: no {} there; name the `sdk` directory of a capw checkout",
                sdk.display(),
                own.display()
            );
        }
    }
    let sdk = match (lang, &checkout) {
        (Lang::Rust, Some(path)) => format!("path = {:?}", path.display().to_string()),
        (Lang::Rust, None) => r#"git = "https://github.com/capw-dev/capw""#.to_string(),
        (_, Some(path)) => path.join(lang.dir()).display().to_string(),
        (_, None) => SDK_COPY.to_string(),
    };
    let readme = README
        .replace("{{lang}}", lang.label())
        .replace("{{point}}", point.name())
        .replace("{{summary}}", point.summary())
        .replace("{{toolchain}}", &toolchain::readme_section(lang))
        .replace("{{build}}", lang.build_command())
        .replace(
            "{{test}}",
            &lang.test_command().map_or_else(String::new, |command| {
                format!(
                    "\nIts unit tests run natively, without a component:\n\n```sh\n{command}\n```\n"
                )
            }),
        )
        .replace("{{guide}}", lang.guide())
        .replace("{{contract}}", lang.contract());
    let files = files
        .into_iter()
        .chain([(PathBuf::from("README.md"), readme)])
        .map(|(path, text)| (path, render(&text, &args.name, &sdk)));
    for (path, text) in files {
        write(&dir.join(path), text.as_bytes())?;
    }
    if let (Some(copy), None) = (lang.sdk_copy(), &checkout) {
        for (path, bytes) in files_under(copy) {
            if in_sdk_copy(&path) {
                write(&dir.join(SDK_COPY).join(path), bytes)?;
            }
        }
    }
    println!(
        "created {} ({} {} provider `{}`); build it with `cd {} && {}`",
        dir.display(),
        lang.label(),
        point.name(),
        args.name,
        dir.display(),
        lang.build_command()
    );
    if let Some(warning) = toolchain::warning(lang, &dir, &|name| std::env::var_os(name)) {
        eprintln!("{warning}");
    }
    Ok(dir)
}

fn write(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("creating {}", parent.display()))?;
    }
    std::fs::write(path, bytes).with_context(|| format!("writing {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_the_host_rules() {
        assert!(check_name("my-provider").is_ok());
        assert!(check_name("a1").is_ok());
        for bad in ["", "1abc", "My", "a_b", "-a", &"a".repeat(64)] {
            let err = check_name(bad).unwrap_err().to_string();
            assert!(err.contains("must be 1-63 characters"), "{bad}: {err}");
        }
    }

    const LANGS: [Lang; 5] = [Lang::Rust, Lang::C, Lang::Python, Lang::Js, Lang::Go];
    const POINTS: [Point; 4] = [
        Point::Infrastructure,
        Point::Bootstrap,
        Point::ControlPlane,
        Point::LifecycleHooks,
    ];

    #[test]
    fn every_starter_carries_the_new_name_only() {
        let mut starters = 0;
        for lang in LANGS {
            for point in POINTS {
                let Ok(files) = starter_files(lang, point) else {
                    continue;
                };
                starters += 1;
                let mut named = false;
                for (path, text) in files {
                    let out = render(&text, "acme-boot", "path = \"/sdk\"");
                    for placeholder in ["{{name}}", "{{crate}}", "{{sdk}}"] {
                        assert!(
                            !out.contains(placeholder),
                            "{lang:?} {point:?} {}: {placeholder} is left",
                            path.display()
                        );
                    }
                    assert!(!out.contains("c-example"), "{}", path.display());
                    named |= out.contains("acme-boot");
                }
                assert!(named, "{lang:?} {point:?}: the name appears nowhere");
            }
        }
        // Four points in four languages with an SDK, two in C.
        assert_eq!(starters, 18);
    }

    #[test]
    fn c_refuses_the_points_it_has_no_starter_for_saying_why() {
        for point in [Point::Infrastructure, Point::ControlPlane] {
            let err = starter_files(Lang::C, point).unwrap_err().to_string();
            assert!(
                err.contains(&format!("no C starter for {}", point.name())),
                "{err}"
            );
            assert!(err.contains("--lang rust|go|python|js"), "{err}");
        }
    }

    #[test]
    fn the_sdk_copy_leaves_tests_and_caches_out() {
        assert!(in_sdk_copy(Path::new("capw/config.py")));
        assert!(in_sdk_copy(Path::new("wit/deps/capw-provider/types.wit")));
        for skipped in [
            "tests/test_config.py",
            "test/host.test.js",
            "capw/__pycache__/config.cpython-314.pyc",
            ".ruff_cache/0.8.0/123",
            "examples/every-point/provider.js",
        ] {
            assert!(!in_sdk_copy(Path::new(skipped)), "{skipped}");
        }
        let copy: Vec<_> = files_under(&SDK_PYTHON)
            .into_iter()
            .filter(|(p, _)| in_sdk_copy(p))
            .collect();
        assert!(copy.iter().any(|(p, _)| p == Path::new("capw/__init__.py")));
    }
}
