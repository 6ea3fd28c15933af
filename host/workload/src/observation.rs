//! What an observation of a workload cluster says, as plain data for the reconcile core.

use std::time::Duration;

/// Longest message taken from a workload cluster (a Node condition, an error).
const MAX_MESSAGE: usize = 512;

/// Longest condition reason taken from a workload cluster.
const MAX_REASON: usize = 64;

/// What the cache saw of one workload cluster.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WorkloadObservation {
    /// `host:port` of the API server the kubeconfig names (the control-plane endpoint).
    pub server: String,
    /// Whether the API answered `/readyz` through it.
    pub api: ApiAvailability,
    /// Every Node the watch holds; `None` before its first list or while the API is
    /// unreachable (the watch's last state may be stale then).
    pub nodes: Option<Vec<ObservedNode>>,
    /// When to look again after a failure: grows with consecutive failures.
    pub retry_after: Option<Duration>,
}

/// Whether the workload API answers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ApiAvailability {
    /// `/readyz` answered `ok` within the probe timeout.
    Available,
    /// It did not: the sanitized error (never credentials).
    Unreachable { error: String },
}

/// One Node of a workload cluster.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ObservedNode {
    pub name: String,
    /// `spec.providerID`, when set.
    pub provider_id: Option<String>,
    /// Its `Ready` condition; `None` when it has none yet.
    pub ready: Option<NodeReadiness>,
    /// Its conditions (at most [`MAX_NODE_CONDITIONS`]), each with its status and last
    /// transition, for health checks.
    pub conditions: Vec<ObservedCondition>,
}

/// Most conditions taken from one Node.
pub const MAX_NODE_CONDITIONS: usize = 16;

/// One Node condition, sanitized: its type, status and the time of its last transition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ObservedCondition {
    /// A valid condition type (may be empty).
    pub type_: String,
    pub status: ReadyStatus,
    /// The last transition, seconds since the Unix epoch, when the Node says.
    pub since: Option<i64>,
}

/// A Node's `Ready` condition, sanitized.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeReadiness {
    pub status: ReadyStatus,
    /// A valid condition reason (may be empty).
    pub reason: String,
    /// At most a few hundred bytes, one line.
    pub message: String,
}

/// A condition's status.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReadyStatus {
    True,
    False,
    Unknown,
}

/// `text` made safe to show in a condition message: control characters become spaces, and
/// it is cut at a few hundred bytes (on a character boundary).
pub fn sanitize_message(text: &str) -> String {
    let out: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    capw_text::truncate(out, MAX_MESSAGE)
}

/// `text` as a condition reason Kubernetes accepts (`[A-Za-z][A-Za-z0-9_,:]*`, not ending
/// in `,` or `:`): other characters dropped, cut short; empty when nothing is left.
pub fn sanitize_reason(text: &str) -> String {
    let mut out: String = text
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | ',' | ':'))
        .skip_while(|c| !c.is_ascii_alphabetic())
        .take(MAX_REASON)
        .collect();
    while out.ends_with([',', ':']) {
        out.pop();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasons_keep_only_what_kubernetes_accepts() {
        assert_eq!(sanitize_reason("KubeletReady"), "KubeletReady");
        assert_eq!(sanitize_reason("9 bad reason!:"), "badreason");
        assert_eq!(sanitize_reason("---"), "");
    }

    #[test]
    fn messages_lose_control_characters_and_length() {
        assert_eq!(sanitize_message("a\nb\u{7}c"), "a b c");
        let long = "é".repeat(400);
        let cut = sanitize_message(&long);
        assert!(cut.len() <= MAX_MESSAGE + '…'.len_utf8());
        assert!(cut.ends_with('…'));
    }
}
