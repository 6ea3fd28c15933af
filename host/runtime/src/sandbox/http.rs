//! Outbound HTTP for a call: `wasi:http` with every request checked against the provider's
//! HTTP grants where it leaves the sandbox, and bounded by the call's deadline.

use std::sync::Arc;
use std::time::Instant;

use wasmtime_wasi_http::{WasiHttpCtx, WasiHttpCtxView, WasiHttpHooks, WasiHttpView};

use super::CallState;
use super::journal::{CallJournal, Capability};
use crate::grants::Grants;

/// The HTTP state of one call.
pub(super) struct HttpState {
    ctx: WasiHttpCtx,
    hooks: HttpGrantHooks,
}

impl HttpState {
    /// HTTP for a call that must end by `deadline`, allowed only where `grants` allow it;
    /// refusals go to `journal`.
    pub(super) fn new(grants: Arc<Grants>, journal: Arc<CallJournal>, deadline: Instant) -> Self {
        HttpState {
            ctx: WasiHttpCtx::new(),
            hooks: HttpGrantHooks {
                grants,
                journal,
                deadline,
            },
        }
    }

    /// When the current call must end: no request outlives it.
    pub(super) fn deadline(&self) -> Instant {
        self.hooks.deadline
    }

    /// Bounds the requests of another call in the same store.
    pub(super) fn set_deadline(&mut self, deadline: Instant) {
        self.hooks.deadline = deadline;
    }
}

impl WasiHttpView for CallState {
    fn http(&mut self) -> WasiHttpCtxView<'_> {
        WasiHttpCtxView {
            ctx: &mut self.http.ctx,
            table: &mut self.table,
            hooks: &mut self.http.hooks,
        }
    }
}

/// Enforces HTTP grants where every request leaves the sandbox.
struct HttpGrantHooks {
    grants: Arc<Grants>,
    journal: Arc<CallJournal>,
    deadline: Instant,
}

type SendFuture = Box<
    dyn Future<
            Output = wasmtime_wasi_http::Result<(
                http::Response<wasmtime_wasi_http::WasiBody>,
                Box<dyn Future<Output = Result<(), wasmtime_wasi_http::Error>> + Send>,
            )>,
        > + Send,
>;

impl WasiHttpHooks for HttpGrantHooks {
    fn send_request(
        &mut self,
        request: http::Request<wasmtime_wasi_http::WasiBody>,
        options: Option<wasmtime_wasi_http::RequestOptions>,
        fut: Box<dyn Future<Output = Result<(), wasmtime_wasi_http::Error>> + Send>,
    ) -> SendFuture {
        let uri = request.uri();
        let scheme = uri.scheme_str().unwrap_or("https").to_string();
        let host = uri.host().unwrap_or_default().to_string();
        let port = uri.port_u16();
        if !self.grants.allows_http(&scheme, &host, port) {
            let target = match port {
                Some(p) => format!("{scheme}://{host}:{p}"),
                None => format!("{scheme}://{host}"),
            };
            self.journal.deny(Capability::Http, target);
            return Box::new(async { Err(wasmtime_wasi_http::Error::HttpRequestDenied) });
        }
        // A request may not outlive the call that made it.
        let remaining = self.deadline.saturating_duration_since(Instant::now());
        let mut options = options.unwrap_or_default();
        for t in [
            &mut options.connect_timeout,
            &mut options.first_byte_timeout,
            &mut options.between_bytes_timeout,
        ] {
            *t = Some(t.map_or(remaining, |t| t.min(remaining)));
        }
        drop(fut);
        Box::new(async move {
            use http_body_util::BodyExt;
            let (res, io) =
                wasmtime_wasi_http::default_send_request(request, Some(options)).await?;
            Ok((
                res.map(BodyExt::boxed_unsync),
                Box::new(io) as Box<dyn Future<Output = _> + Send>,
            ))
        })
    }
}
