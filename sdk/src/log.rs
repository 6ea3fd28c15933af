//! Structured logging into the host's logs, tagged by the host with the provider and the call.
//!
//! Cheap: the host drops records below its level and bounds the number and size of records per
//! call. Never log secret material (bootstrap data, kubeconfigs, secret values).
//!
//! Outside a wasm32 component (a provider's native unit tests) there is no host; records go to
//! stderr instead, so code that logs stays testable.

pub use crate::__bindings::capw::provider::host_log::Level;

/// Writes one record at `level` with structured `fields` (key, value).
pub fn log(level: Level, message: &str, fields: &[(&str, &str)]) {
    write(level, message, fields);
}

/// Writes one record at level `trace`.
pub fn trace(message: &str, fields: &[(&str, &str)]) {
    log(Level::Trace, message, fields);
}

/// Writes one record at level `debug`.
pub fn debug(message: &str, fields: &[(&str, &str)]) {
    log(Level::Debug, message, fields);
}

/// Writes one record at level `info`.
pub fn info(message: &str, fields: &[(&str, &str)]) {
    log(Level::Info, message, fields);
}

/// Writes one record at level `warn`.
pub fn warn(message: &str, fields: &[(&str, &str)]) {
    log(Level::Warn, message, fields);
}

/// Writes one record at level `error`.
pub fn error(message: &str, fields: &[(&str, &str)]) {
    log(Level::Error, message, fields);
}

#[cfg(target_arch = "wasm32")]
fn write(level: Level, message: &str, fields: &[(&str, &str)]) {
    let fields: Vec<(String, String)> = fields
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    crate::__bindings::capw::provider::host_log::log(level, message, &fields);
}

#[cfg(not(target_arch = "wasm32"))]
fn write(level: Level, message: &str, fields: &[(&str, &str)]) {
    use std::fmt::Write as _;
    let mut line = format!("[{level:?}] {message}");
    for (k, v) in fields {
        let _ = write!(line, " {k}={v:?}");
    }
    eprintln!("{line}");
}

#[cfg(test)]
mod tests {
    #[test]
    fn native_logging_does_not_need_a_host() {
        super::info("hello", &[("cluster", "c1")]);
        super::error("boom", &[]);
    }
}
