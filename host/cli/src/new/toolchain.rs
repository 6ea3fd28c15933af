//! What each starter's build needs, at the versions `scripts/toolchains.sh` pins: listed in
//! the starter's README, and looked for when `capw plugin new` writes the starter, so that a
//! missing tool is named before the first build fails on it.

use std::ffi::OsString;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::cli::Lang;

/// How a starter's build finds a tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A program: the make variable's value, else `default`, looked up on `PATH` unless it
    /// holds a `/`.
    Program,
    /// A file or a directory: the make variable's value, else `default` inside the project.
    Path,
    /// Rust's standard library for `wasm32-wasip2`, in the sysroot of the `rustc` on `PATH`.
    RustTarget,
}

/// One tool a starter's build needs.
#[derive(Debug, Clone, Copy)]
struct Tool {
    /// Its name for humans, with the pinned version when there is one.
    label: &'static str,
    /// The make variable that names it, if the starter's Makefile reads one.
    variable: Option<&'static str>,
    /// What the build uses when the variable is not set.
    default: &'static str,
    kind: Kind,
}

const fn program(
    label: &'static str,
    variable: Option<&'static str>,
    default: &'static str,
) -> Tool {
    Tool {
        label,
        variable,
        default,
        kind: Kind::Program,
    }
}

const CARGO: Tool = program("cargo", None, "cargo");
const RUST_TARGET: Tool = Tool {
    label: "Rust's wasm32-wasip2 target",
    variable: None,
    default: "wasm32-wasip2",
    kind: Kind::RustTarget,
};
const CLANG: Tool = program("clang 14 with lld and wasi-libc", None, "clang");
const WIT_BINDGEN: Tool = program("wit-bindgen 0.63.0", Some("WIT_BINDGEN"), "wit-bindgen");
const WASM_TOOLS: Tool = program("wasm-tools 1.262.0", Some("WASM_TOOLS"), "wasm-tools");
const WASI_ADAPTER: Tool = Tool {
    label: "the WASI preview1 reactor adapter of wasmtime 48.0.8",
    variable: Some("WASI_ADAPTER"),
    default: "wasi_snapshot_preview1.reactor.wasm",
    kind: Kind::Path,
};
const COMPONENTIZE_PY: Tool = program(
    "componentize-py 0.25.1",
    Some("COMPONENTIZE_PY"),
    "componentize-py",
);
const COMPONENTIZE_JS: Tool = program(
    "componentize-js 0.23.0 (with wizer 10.0.0)",
    Some("COMPONENTIZE_JS"),
    "componentize-js",
);
const NODE: Tool = program("Node.js 20 or later, for `make test`", Some("NODE"), "node");
const PYTHON: Tool = program(
    "Python 3.11 or later, for `make test`",
    Some("PYTHON"),
    "python3",
);
/// Any Go from 1.21 fetches the release the Makefile's `GOTOOLCHAIN` names.
const GO: Tool = program(
    "Go 1.21 or later, from https://go.dev/dl (the build fetches go1.27.3)",
    Some("GO"),
    "go",
);
const GO_PKG: Tool = Tool {
    label: "go.bytecodealliance.org/pkg of wit-bindgen-go 0.63.0",
    variable: Some("GO_PKG"),
    default: "go-pkg",
    kind: Kind::Path,
};

/// The adapter, downloaded into the project, where the Makefile looks for it by default.
const FETCH_ADAPTER: &str = "curl -fLO https://github.com/bytecodealliance/wasmtime/releases/download/v48.0.8/wasi_snapshot_preview1.reactor.wasm";

/// What `lang`'s starter builds with.
fn tools(lang: Lang) -> &'static [Tool] {
    match lang {
        Lang::Rust => &[CARGO, RUST_TARGET],
        Lang::C => &[CLANG, WIT_BINDGEN, WASM_TOOLS, WASI_ADAPTER],
        Lang::Python => &[COMPONENTIZE_PY, PYTHON],
        Lang::Js => &[COMPONENTIZE_JS, NODE],
        // The Go SDK carries its bindings: no wit-bindgen.
        Lang::Go => &[GO, WASM_TOOLS, WASI_ADAPTER, GO_PKG],
    }
}

/// The one command that installs what `lang`'s starter needs, run in the project.
fn install_command(lang: Lang) -> String {
    match lang {
        Lang::Rust => "rustup target add wasm32-wasip2".to_owned(),
        Lang::C => format!(
            "sudo apt-get install clang lld wasi-libc libclang-rt-14-dev-wasm32 && \
             cargo install --locked wit-bindgen-cli@0.63.0 wasm-tools@1.262.0 && \
             {FETCH_ADAPTER}"
        ),
        Lang::Python => "pip install componentize-py==0.25.1".to_owned(),
        Lang::Js => {
            "npm install -g @bytecodealliance/componentize-js@0.23.0 @bytecodealliance/wizer@10.0.0"
                .to_owned()
        }
        Lang::Go => format!(
            "cargo install --locked wit-bindgen-cli@0.63.0 wasm-tools@1.262.0 && \
             cp -r ~/.cargo/registry/src/*/wit-bindgen-go-0.63.0/src/pkg go-pkg && \
             {FETCH_ADAPTER}"
        ),
    }
}

/// The README's section on the toolchain of `lang`.
pub(super) fn readme_section(lang: Lang) -> String {
    let mut text = String::from("## Toolchain\n\nThe build needs:\n\n");
    for tool in tools(lang) {
        let _ = match tool.variable {
            Some(variable) => writeln!(
                text,
                "- {} (`{}`, or the path in the make variable `{variable}`)",
                tool.label, tool.default
            ),
            None => writeln!(text, "- {}", tool.label),
        };
    }
    let _ = write!(
        text,
        "\nInstall them, from this directory, with:\n\n```sh\n{}\n```\n",
        install_command(lang)
    );
    if lang != Lang::Rust {
        text.push_str(
            "\nIn a capw checkout, `make toolchains` installs the toolchains of every language \
             into `~/.cache/capw-toolchains` and writes the make variables that name them to \
             `toolchains.env` in its target directory; then build with \
             `env $(cat CAPW/target/toolchains.env) make OUT=provider.wasm`.\n",
        );
    }
    text
}

/// The tools of `lang`'s starter in `project` that are not there, each with what was looked
/// for. `env` reads the environment (`PATH` and the make variables).
fn missing(lang: Lang, project: &Path, env: &dyn Fn(&str) -> Option<OsString>) -> Vec<String> {
    let path = env("PATH").unwrap_or_default();
    let on_path = |program: &Path| -> bool {
        // Make runs in the project: a path with a directory in it is taken from there.
        if program.components().count() > 1 {
            return project.join(program).is_file();
        }
        std::env::split_paths(&path).any(|dir| dir.join(program).is_file())
    };
    let mut out = Vec::new();
    for tool in tools(lang) {
        // Make's `?=` keeps a variable the environment defines, even an empty one.
        let set = tool.variable.and_then(env);
        let found = match (tool.kind, &set) {
            (Kind::Program, Some(value)) => on_path(Path::new(value)),
            (Kind::Program, None) => on_path(Path::new(tool.default)),
            (Kind::Path, Some(value)) => project.join(value).exists(),
            (Kind::Path, None) => project.join(tool.default).exists(),
            (Kind::RustTarget, _) => has_rust_target(&path, tool.default),
        };
        if found {
            continue;
        }
        let looked = match (tool.variable, &set) {
            (Some(variable), Some(value)) => {
                format!("{variable}={} does not exist", value.to_string_lossy())
            }
            (Some(variable), None) if tool.kind == Kind::Path => {
                format!("no {} here and {variable} is not set", tool.default)
            }
            (Some(variable), None) => {
                format!("{} is not on PATH and {variable} is not set", tool.default)
            }
            (None, _) if tool.kind == Kind::RustTarget => {
                "not installed for the rustc on PATH".to_owned()
            }
            (None, _) => format!("{} is not on PATH", tool.default),
        };
        out.push(format!("{} ({looked})", tool.label));
    }
    out
}

/// Whether the `rustc` found on `path` has the standard library for `target`.
fn has_rust_target(path: &OsString, target: &str) -> bool {
    let Some(rustc) = std::env::split_paths(path)
        .map(|dir| dir.join("rustc"))
        .find(|p| p.is_file())
    else {
        return false;
    };
    let Ok(output) = Command::new(rustc)
        .args(["--print", "sysroot"])
        .env("PATH", path)
        .output()
    else {
        return false;
    };
    let sysroot = PathBuf::from(String::from_utf8_lossy(&output.stdout).trim());
    output.status.success() && sysroot.join("lib/rustlib").join(target).is_dir()
}

/// The warning `capw plugin new` prints when tools of `lang`'s starter in `project` are
/// missing, or `None` when every one was found.
pub(super) fn warning(
    lang: Lang,
    project: &Path,
    env: &dyn Fn(&str) -> Option<OsString>,
) -> Option<String> {
    let missing = missing(lang, project, env);
    if missing.is_empty() {
        return None;
    }
    let mut text = format!(
        "warning: the {} starter is written, but its build needs tools not found here:\n",
        lang.label()
    );
    for tool in &missing {
        let _ = writeln!(text, "  - {tool}");
    }
    let _ = write!(
        text,
        "Install them, from {}, with:\n  {}\n(its README.md, section Toolchain, says more)",
        project.display(),
        install_command(lang)
    );
    Some(text)
}
