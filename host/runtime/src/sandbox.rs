//! The per-call store data: the sandbox a call runs in. Deny by default: no preopened
//! directory, no environment, no arguments, every socket refused, stdio captured, outbound
//! HTTP only to granted authorities, secrets only those granted.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use wasmtime::component::ResourceTable;
use wasmtime::{ResourceLimiter, Result as WasmResult};
use wasmtime_wasi::clocks::{WasiClocksCtx, WasiClocksCtxView};
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};
use wasmtime_wasi_http::{WasiHttpCtx, WasiHttpCtxView, WasiHttpHooks, WasiHttpView};

use crate::error::{Capability, Denial};
use crate::grants::Grants;
use crate::limits::{
    MAX_CAPTURED_OUTPUT, MAX_LOG_FIELDS, MAX_LOG_MESSAGE, MAX_LOG_RECORDS_PER_CALL,
};
use crate::output::CapturedOutput;

/// What one call leaves behind besides its answer: refusals and limit hits. Shared with
/// closures the WASI context keeps, hence the lock.
#[derive(Default)]
pub(crate) struct CallJournal {
    denials: Mutex<Vec<Denial>>,
}

impl CallJournal {
    fn deny(&self, capability: Capability, target: String) {
        tracing::warn!(capability = ?capability, %target, "sandbox denied a capability");
        self.denials
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(Denial { capability, target });
    }

    pub(crate) fn first_denial(&self) -> Option<Denial> {
        self.denials
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .first()
            .cloned()
    }
}

/// Tracks one instance's memory against its limit: the sum over all its linear memories, so
/// a component of several core modules (Python, JavaScript) gets one budget, not one each.
pub(crate) struct MemoryLimiter {
    limit: usize,
    /// Bytes of all linear memories of the instance now.
    total: usize,
    /// Largest memory any linear memory of the instance asked for, granted or not.
    pub(crate) peak: usize,
    /// A growth was refused because of the limit.
    pub(crate) hit: bool,
}

impl ResourceLimiter for MemoryLimiter {
    fn memory_growing(
        &mut self,
        current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> WasmResult<bool> {
        let total = self.total.saturating_add(desired.saturating_sub(current));
        self.peak = self.peak.max(total);
        if total > self.limit {
            self.hit = true;
            return Ok(false);
        }
        self.total = total;
        Ok(true)
    }

    fn table_growing(
        &mut self,
        _current: usize,
        _desired: usize,
        _maximum: Option<usize>,
    ) -> WasmResult<bool> {
        // Tables are bounded by the pool's `table_elements`.
        Ok(true)
    }
}

/// Scrubs granted secret values from what a provider says (logs, stdout, error messages), so
/// a careless or hostile provider cannot leak them into the host's logs or conditions.
#[derive(Clone, Default)]
pub(crate) struct Redactor {
    needles: Arc<Vec<String>>,
}

/// Secrets shorter than this are not scrubbed: replacing every "a" would make logs useless.
const MIN_REDACTED_LEN: usize = 6;

impl Redactor {
    pub(crate) fn new(grants: &Grants) -> Self {
        let needles = grants
            .secret_values()
            .filter_map(|v| std::str::from_utf8(v).ok())
            .map(str::trim)
            .filter(|v| v.len() >= MIN_REDACTED_LEN)
            .map(str::to_owned)
            .collect();
        Redactor {
            needles: Arc::new(needles),
        }
    }

    /// Replaces the secrets in `text`, allocating only when it holds one.
    pub(crate) fn scrub_in_place(&self, text: &mut String) {
        if self.needles.iter().any(|n| text.contains(n.as_str())) {
            *text = self.scrub(text);
        }
    }

    pub(crate) fn scrub(&self, text: &str) -> String {
        let mut out = text.to_owned();
        for n in self.needles.iter() {
            if out.contains(n.as_str()) {
                out = out.replace(n.as_str(), "[redacted]");
            }
        }
        out
    }
}

/// Store data of one call.
pub(crate) struct CallState {
    /// Made on the call's first use of WASI (other than its clocks).
    wasi: Option<Wasi>,
    /// Made on the call's first clock read. Apart from [`Wasi`]: providers read the clock on
    /// most calls (the Rust SDK does, to time the call's deadline), and a clock is much
    /// cheaper to make than a whole WASI context.
    clocks: Option<WasiClocksCtx>,
    http: WasiHttpCtx,
    table: ResourceTable,
    /// The call context lent to the call under way (contract 0.2, where the provider reads
    /// it through getters); set by the bindings before the call, cleared after it.
    pub(crate) call_context: Option<crate::model::types::CallContext>,
    hooks: HttpGrantHooks,
    pub(crate) limiter: MemoryLimiter,
    pub(crate) journal: Arc<CallJournal>,
    grants: Arc<Grants>,
    redactor: Redactor,
    log_records: u32,
    log_dropped: u32,
}

/// A call's WASI context and the guest's stdout and stderr it writes to.
struct Wasi {
    ctx: WasiCtx,
    stdout: CapturedOutput,
    stderr: CapturedOutput,
}

impl CallState {
    pub(crate) fn new(grants: Arc<Grants>, redactor: Redactor, deadline: Instant) -> Self {
        let journal = Arc::new(CallJournal::default());
        CallState {
            wasi: None,
            clocks: None,
            http: WasiHttpCtx::new(),
            table: ResourceTable::new(),
            call_context: None,
            hooks: HttpGrantHooks {
                grants: grants.clone(),
                journal: journal.clone(),
                deadline,
            },
            limiter: MemoryLimiter {
                limit: grants.limits.memory,
                total: 0,
                peak: 0,
                hit: false,
            },
            journal,
            grants,
            redactor,
            log_records: 0,
            log_dropped: 0,
        }
    }

    /// What the guest wrote to stdout and stderr, by stream; none when it never used WASI.
    pub(crate) fn captured(&self) -> impl Iterator<Item = (&'static str, &CapturedOutput)> {
        self.wasi
            .iter()
            .flat_map(|w| [("stdout", &w.stdout), ("stderr", &w.stderr)])
    }

    /// `wasi:clocks`, linked in place of the clocks of the WASI context.
    pub(crate) fn clocks(&mut self) -> WasiClocksCtxView<'_> {
        WasiClocksCtxView {
            ctx: self.clocks.get_or_insert_with(WasiClocksCtx::default),
            table: &mut self.table,
        }
    }

    pub(crate) fn redactor(&self) -> &Redactor {
        &self.redactor
    }

    /// When the current call must end.
    pub(crate) fn deadline(&self) -> Instant {
        self.hooks.deadline
    }

    /// Start the clock of another call in the same store.
    pub(crate) fn set_deadline(&mut self, deadline: Instant) {
        self.hooks.deadline = deadline;
    }

    pub(crate) fn log_dropped(&self) -> u32 {
        self.log_dropped
    }
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

impl WasiView for CallState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        let wasi = self
            .wasi
            .get_or_insert_with(|| deny_all_wasi(&self.journal));
        WasiCtxView {
            ctx: &mut wasi.ctx,
            table: &mut self.table,
        }
    }
}

impl WasiHttpView for CallState {
    fn http(&mut self) -> WasiHttpCtxView<'_> {
        WasiHttpCtxView {
            ctx: &mut self.http,
            table: &mut self.table,
            hooks: &mut self.hooks,
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

/// `s` with its control characters (newline, carriage return, ESC, the rest of C0 and C1,
/// DEL) escaped as `\n`, `\r`, `\u{1b}`...: a provider's log record stays one line and
/// cannot rewrite the terminal or forge a record.
fn one_line(s: &str) -> String {
    if !s.chars().any(char::is_control) {
        return s.to_owned();
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

fn truncate(mut s: String) -> String {
    if s.len() > MAX_LOG_MESSAGE {
        let mut cut = MAX_LOG_MESSAGE;
        while !s.is_char_boundary(cut) {
            cut -= 1;
        }
        s.truncate(cut);
        s.push('…');
    }
    s
}

/// The level of a record a provider writes through `host-log`, at any contract version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LogLevel {
    Trace,
    Debug,
    Info,
    Warn,
    Error,
}

/// Why `host-secrets.get` has no value for a name, at any contract version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SecretLookupError {
    /// No grant of that name; recorded as a denial.
    NotGranted,
    /// Granted, but the Secret behind the grant does not exist (yet).
    NotFound,
}

impl CallState {
    /// `host-log.log`: one record into the host's logs, bounded and redacted.
    pub(crate) fn provider_log(
        &mut self,
        level: LogLevel,
        message: String,
        fields: Vec<(String, String)>,
    ) {
        if self.log_records >= MAX_LOG_RECORDS_PER_CALL {
            self.log_dropped += 1;
            return;
        }
        self.log_records += 1;
        let message = one_line(&self.redactor.scrub(&truncate(message)));
        let fields = fields
            .into_iter()
            .take(MAX_LOG_FIELDS)
            .map(|(k, v)| {
                let v = self.redactor.scrub(&truncate(v));
                format!("{}={}", one_line(&truncate(k)), one_line(&v))
            })
            .collect::<Vec<_>>()
            .join(" ");
        match level {
            LogLevel::Trace => tracing::trace!(target: "capw::provider", %fields, "{message}"),
            LogLevel::Debug => tracing::debug!(target: "capw::provider", %fields, "{message}"),
            LogLevel::Info => tracing::info!(target: "capw::provider", %fields, "{message}"),
            LogLevel::Warn => tracing::warn!(target: "capw::provider", %fields, "{message}"),
            LogLevel::Error => tracing::error!(target: "capw::provider", %fields, "{message}"),
        }
    }

    /// `host-secrets.get`: the value of the secret granted under `name`.
    pub(crate) fn granted_secret(&mut self, name: String) -> Result<Vec<u8>, SecretLookupError> {
        match self.grants.secrets.get(&name) {
            Some(Some(secret)) => Ok(secret.expose().to_vec()),
            Some(None) => Err(SecretLookupError::NotFound),
            None => {
                self.journal.deny(Capability::Secret, name);
                Err(SecretLookupError::NotGranted)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grants::Secret;

    #[test]
    fn redactor_scrubs_granted_values_only() {
        let mut grants = Grants::default();
        grants
            .secrets
            .insert("token".into(), Some(Secret::new("s3cr3t-token-value")));
        grants
            .secrets
            .insert("short".into(), Some(Secret::new("ab")));
        let r = Redactor::new(&grants);
        assert_eq!(
            r.scrub("auth failed for s3cr3t-token-value at ab"),
            "auth failed for [redacted] at ab"
        );
    }

    #[test]
    fn log_text_stays_on_one_line() {
        assert_eq!(
            one_line("ok\r\u{1b}[2KReady=True\nnext\u{9b}"),
            r"ok\r\u{1b}[2KReady=True\nnext\u{9b}"
        );
        assert_eq!(one_line("plain · text"), "plain · text");
    }

    #[test]
    fn limiter_refuses_growth_past_limit_and_remembers() {
        let mut l = MemoryLimiter {
            limit: 100,
            total: 0,
            peak: 0,
            hit: false,
        };
        assert!(l.memory_growing(0, 60, None).unwrap());
        assert!(!l.hit);
        // A second memory shares the budget.
        assert!(l.memory_growing(0, 40, None).unwrap());
        assert!(!l.memory_growing(60, 61, None).unwrap());
        assert!(l.hit);
        assert_eq!(l.peak, 101);
        assert_eq!(l.total, 100);
    }
}
