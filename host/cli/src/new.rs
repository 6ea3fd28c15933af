//! `capw plugin new`: a starter provider in one of the supported languages, buildable as it is.
//!
//! The starters are the example providers of `plugins/other-languages/` (the same bootstrap provider
//! in every language), with the provider's name put in, the contract's WIT files beside them
//! and a README saying what the build needs, how to build and how to test. When a tool the
//! build needs is not found, the starter is written all the same, with a warning that names
//! the tool and the command that installs it ([`toolchain`]).

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};

use crate::cli::{Lang, NewArgs};

mod toolchain;

/// One file of a starter: its path inside the project and its text.
type File = (&'static str, &'static str);

/// The contract, copied into the starters in other languages so that they build on their own:
/// version 0.1, which they implement (plugins/other-languages/). The Rust starter gets no copy: it
/// builds through capw-sdk, which carries the contract it targets (0.2).
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

const C: &[File] = &[
    (
        "provider.c",
        include_str!("../../../plugins/other-languages/c/provider.c"),
    ),
    (
        "json.c",
        include_str!("../../../plugins/other-languages/c/json.c"),
    ),
    (
        "json.h",
        include_str!("../../../plugins/other-languages/c/json.h"),
    ),
    (
        "Makefile",
        include_str!("../../../plugins/other-languages/c/Makefile"),
    ),
];

const PYTHON: &[File] = &[
    (
        "app.py",
        include_str!("../../../plugins/other-languages/python/app.py"),
    ),
    (
        "Makefile",
        include_str!("../../../plugins/other-languages/python/Makefile"),
    ),
];

const JS: &[File] = &[
    (
        "provider.js",
        include_str!("../../../plugins/other-languages/js/provider.js"),
    ),
    (
        "Makefile",
        include_str!("../../../plugins/other-languages/js/Makefile"),
    ),
];

const GO: &[File] = &[
    (
        "export_capw_provider_metadata/metadata.go",
        include_str!(
            "../../../plugins/other-languages/go/export_capw_provider_metadata/metadata.go"
        ),
    ),
    (
        "export_capw_provider_bootstrap/bootstrap.go",
        include_str!(
            "../../../plugins/other-languages/go/export_capw_provider_bootstrap/bootstrap.go"
        ),
    ),
    (
        "go.mod",
        include_str!("../../../plugins/other-languages/go/go.mod"),
    ),
    (
        "Makefile",
        include_str!("../../../plugins/other-languages/go/Makefile"),
    ),
];

const RUST: &[File] = &[
    ("src/lib.rs", include_str!("../templates/rust/src/lib.rs")),
    ("Cargo.toml", include_str!("../templates/rust/Cargo.toml")),
];

const README: &str = include_str!("../templates/README.md");

impl Lang {
    fn files(self) -> &'static [File] {
        match self {
            Lang::Rust => RUST,
            Lang::C => C,
            Lang::Python => PYTHON,
            Lang::Js => JS,
            Lang::Go => GO,
        }
    }

    /// The provider name the example carries, which the starter replaces.
    fn example_name(self) -> &'static str {
        match self {
            // The Rust starter is a template of its own, with `{{name}}` placeholders.
            Lang::Rust => "{{name}}",
            Lang::C => "c-example",
            Lang::Python => "python-example",
            Lang::Js => "js-example",
            Lang::Go => "go-example",
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

    /// Where the contract the starter implements comes from, for its README.
    fn contract(self) -> &'static str {
        match self {
            Lang::Rust => "`capw:provider@0.3.0` (the draft), through capw-sdk",
            Lang::C | Lang::Python | Lang::Js | Lang::Go => {
                "in `wit/` (`capw:provider@0.1.0`, served beside 0.2 and 0.3)"
            }
        }
    }

    fn guide(self) -> &'static str {
        match self {
            Lang::Rust => "writing-a-provider-rust.md",
            Lang::C | Lang::Python | Lang::Js | Lang::Go => "writing-a-provider-other-languages.md",
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

/// The text of `file` for the provider `name`.
fn render(lang: Lang, text: &str, name: &str, sdk: &str) -> String {
    text.replace(lang.example_name(), name)
        .replace("{{name}}", name)
        .replace("{{crate}}", &name.replace('-', "_"))
        .replace("{{sdk}}", sdk)
}

/// Writes the starter and returns its directory.
pub fn run(args: NewArgs) -> anyhow::Result<PathBuf> {
    check_name(&args.name)?;
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
    let sdk = match &args.sdk {
        Some(path) => format!("path = {:?}", path.display().to_string()),
        None => r#"git = "https://github.com/capw-dev/capw""#.to_string(),
    };
    let lang = args.lang;
    let readme = README
        .replace("{{lang}}", lang.label())
        .replace("{{toolchain}}", &toolchain::readme_section(lang))
        .replace("{{build}}", lang.build_command())
        .replace("{{guide}}", lang.guide())
        .replace("{{contract}}", lang.contract());
    let wit = if lang == Lang::Rust { &[][..] } else { WIT };
    let files = wit
        .iter()
        .chain(lang.files())
        .map(|(path, text)| (*path, render(lang, text, &args.name, &sdk)))
        .chain([("README.md", render(lang, &readme, &args.name, &sdk))]);
    for (path, text) in files {
        write(&dir.join(path), &text)?;
    }
    println!(
        "created {} ({} provider `{}`); build it with `cd {} && {}`",
        dir.display(),
        lang.label(),
        args.name,
        dir.display(),
        lang.build_command()
    );
    if let Some(warning) = toolchain::warning(lang, &dir, &|name| std::env::var_os(name)) {
        eprintln!("{warning}");
    }
    Ok(dir)
}

fn write(path: &Path, text: &str) -> anyhow::Result<()> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("creating {}", parent.display()))?;
    }
    std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))
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

    #[test]
    fn every_starter_carries_the_new_name_only() {
        for lang in [Lang::Rust, Lang::C, Lang::Python, Lang::Js, Lang::Go] {
            let mut named = false;
            for (path, text) in lang.files() {
                let out = render(lang, text, "acme-boot", "path = \"/sdk\"");
                assert!(!out.contains(lang.example_name()), "{path}");
                for placeholder in ["{{name}}", "{{crate}}", "{{sdk}}"] {
                    assert!(!out.contains(placeholder), "{path}: {placeholder} is left");
                }
                named |= out.contains("acme-boot");
            }
            assert!(named, "{lang:?}: the name appears nowhere");
        }
    }
}
