//! `host-log`: a provider's records into the host's logs, bounded in number and size,
//! redacted, and kept to one line each.

use super::CallState;
use crate::limits::{MAX_LOG_FIELDS, MAX_LOG_MESSAGE, MAX_LOG_RECORDS_PER_CALL};

/// The level of a record a provider writes through `host-log`, at any contract version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LogLevel {
    Trace,
    Debug,
    Info,
    Warn,
    Error,
}

/// How much of its log budget one call has used.
#[derive(Default)]
pub(super) struct LogBudget {
    records: u32,
    dropped: u32,
}

impl CallState {
    /// `host-log.log`: one record into the host's logs, bounded and redacted.
    pub(crate) fn provider_log(
        &mut self,
        level: LogLevel,
        message: String,
        fields: Vec<(String, String)>,
    ) {
        if self.log.records >= MAX_LOG_RECORDS_PER_CALL {
            self.log.dropped += 1;
            return;
        }
        self.log.records += 1;
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

    /// How many records over [`MAX_LOG_RECORDS_PER_CALL`] the call dropped.
    pub(crate) fn log_dropped(&self) -> u32 {
        self.log.dropped
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

fn truncate(s: String) -> String {
    capw_text::truncate(s, MAX_LOG_MESSAGE)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_text_stays_on_one_line() {
        assert_eq!(
            one_line("ok\r\u{1b}[2KReady=True\nnext\u{9b}"),
            r"ok\r\u{1b}[2KReady=True\nnext\u{9b}"
        );
        assert_eq!(one_line("plain · text"), "plain · text");
    }
}
