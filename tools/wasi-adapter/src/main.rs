//! Writes the WASI preview1 reactor adapter of wasmtime's own release to the path given as the
//! only argument. `wasm-tools component new --adapt` needs it as a file to turn a core module
//! that imports `wasi_snapshot_preview1` (C with wasi-libc, Go's `wasip1`) into a component.

use std::path::PathBuf;

use anyhow::{Context, bail};
use wasi_preview1_component_adapter_provider::WASI_SNAPSHOT_PREVIEW1_REACTOR_ADAPTER;

fn main() -> anyhow::Result<()> {
    let mut args = std::env::args_os().skip(1);
    let (Some(out), None) = (args.next().map(PathBuf::from), args.next()) else {
        bail!("usage: capw-wasi-adapter OUT.wasm");
    };
    if let Some(dir) = out.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    std::fs::write(&out, WASI_SNAPSHOT_PREVIEW1_REACTOR_ADAPTER)
        .with_context(|| format!("writing {}", out.display()))?;
    Ok(())
}
