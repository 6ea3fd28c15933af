//! Which secret values the host scrubs from a provider's text, as the targets check it.
//!
//! The host (`Redactor` in `host/runtime`) scrubs the values granted to a call that are UTF-8
//! and at least [`MIN_SCRUBBED_LEN`] bytes once trimmed; shorter ones are left, by design.

/// Secrets shorter than this (after trimming) are not scrubbed.
pub const MIN_SCRUBBED_LEN: usize = 6;

/// The values among `values` that the host scrubs, trimmed as it trims them.
pub fn scrubbed(values: &[Vec<u8>]) -> Vec<&str> {
    values
        .iter()
        .filter_map(|v| std::str::from_utf8(v).ok())
        .map(str::trim)
        .filter(|v| v.len() >= MIN_SCRUBBED_LEN)
        .collect()
}

/// Whether none of `needles` overlaps the `[redacted]` placeholder: one that does can be made
/// anew by scrubbing another, so "no secret survives" holds only for sets where this is true.
pub fn placeholder_free(needles: &[&str]) -> bool {
    needles
        .iter()
        .all(|n| !n.contains(['[', ']']) && !"redacted".contains(n))
}
