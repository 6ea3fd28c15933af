//! Redaction: granted secret values scrubbed from what a provider says.

use std::sync::Arc;

use crate::grants::Grants;

/// Scrubs granted secret values from what a provider says (logs, stdout, error messages), so
/// a careless or hostile provider cannot leak them into the host's logs or conditions.
#[derive(Clone, Default)]
pub(crate) struct Redactor {
    needles: Arc<Vec<String>>,
}

/// Secrets shorter than this are not scrubbed: replacing every "a" would make logs useless.
const MIN_REDACTED_LEN: usize = 6;

impl Redactor {
    /// A redactor of every secret value in `grants` (as text, trimmed) at least
    /// [`MIN_REDACTED_LEN`] bytes long.
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

    /// `text` with every secret replaced by `[redacted]`.
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
}
