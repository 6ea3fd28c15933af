//! WASI for a call: deny by default. No preopened directory, no environment, no arguments,
//! every socket refused (and journaled), stdout and stderr captured. Both the context and the
//! clocks are made on first use: most provider calls use neither.

use std::sync::Arc;

use wasmtime_wasi::clocks::{WasiClocksCtx, WasiClocksCtxView};
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

use super::CallState;
use super::journal::{CallJournal, Capability};
use crate::limits::MAX_CAPTURED_OUTPUT;
use crate::output::CapturedOutput;

/// The WASI state of one call.
#[derive(Default)]
pub(super) struct WasiState {
    /// Made on the call's first use of WASI (other than its clocks).
    full: Option<Wasi>,
    /// Made on the call's first clock read. Apart from [`Wasi`]: providers read the clock on
    /// most calls (the Rust SDK does, to time the call's deadline), and a clock is much
    /// cheaper to make than a whole WASI context.
    clocks: Option<WasiClocksCtx>,
}

/// A call's WASI context and the guest's stdout and stderr it writes to.
struct Wasi {
    ctx: WasiCtx,
    stdout: CapturedOutput,
    stderr: CapturedOutput,
}

/// The WASI context of a call, made on its first WASI call: most provider calls make none,
/// and a context (clocks, random sources, stdio) costs about a microsecond to build.
fn deny_all_wasi(journal: &Arc<CallJournal>) -> Wasi {
    let journal = journal.clone();
    let stdout = CapturedOutput::new(MAX_CAPTURED_OUTPUT);
    let stderr = CapturedOutput::new(MAX_CAPTURED_OUTPUT);
    let ctx = WasiCtx::builder()
        .stdout(stdout.clone())
        .stderr(stderr.clone())
        .allow_ip_name_lookup(false)
        // Sockets may be created, but every address is refused (and recorded) below, so no
        // bind, connect or send ever happens.
        .allow_tcp(true)
        .allow_udp(true)
        .socket_addr_check(move |addr, _use| {
            journal.deny(Capability::Socket, addr.to_string());
            Box::pin(async { false })
        })
        .build();
    Wasi {
        ctx,
        stdout,
        stderr,
    }
}

impl CallState {
    /// What the guest wrote to stdout and stderr, by stream; none when it never used WASI.
    pub(crate) fn captured(&self) -> impl Iterator<Item = (&'static str, &CapturedOutput)> {
        self.wasi
            .full
            .iter()
            .flat_map(|w| [("stdout", &w.stdout), ("stderr", &w.stderr)])
    }

    /// `wasi:clocks`, linked in place of the clocks of the WASI context.
    pub(crate) fn clocks(&mut self) -> WasiClocksCtxView<'_> {
        WasiClocksCtxView {
            ctx: self.wasi.clocks.get_or_insert_with(WasiClocksCtx::default),
            table: &mut self.table,
        }
    }
}

impl WasiView for CallState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        let wasi = self
            .wasi
            .full
            .get_or_insert_with(|| deny_all_wasi(&self.journal));
        WasiCtxView {
            ctx: &mut wasi.ctx,
            table: &mut self.table,
        }
    }
}
