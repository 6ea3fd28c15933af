//! The service's versions and the way from one to another: one minor at a time, never down.

use std::cmp::Ordering;

use capw_sdk::types::KubernetesVersion;

/// Where the service's version stands against the desired one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stepping {
    /// It runs the desired version.
    Reached,
    /// It runs a later version than desired (the service upgraded itself): never asked down.
    Ahead,
    /// It runs an earlier version: ask for this one next, at most one minor up.
    Next(KubernetesVersion),
    /// The desired version has another major version, which no update reaches.
    MajorChange,
}

/// `1.35.2` or `v1.35.2`, as simcloud spells versions.
pub fn parse(text: &str) -> Option<KubernetesVersion> {
    let text = text.strip_prefix('v').unwrap_or(text);
    let mut parts = text.split('.').map(|p| p.parse::<u32>().ok());
    let (Some(Some(major)), Some(Some(minor)), Some(Some(patch)), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return None;
    };
    Some(KubernetesVersion {
        major,
        minor,
        patch,
    })
}

/// simcloud's spelling of `version`: `1.35.2`.
pub fn spell(version: KubernetesVersion) -> String {
    format!("{}.{}.{}", version.major, version.minor, version.patch)
}

/// Compares two versions by major, minor, patch.
pub fn compare(a: KubernetesVersion, b: KubernetesVersion) -> Ordering {
    (a.major, a.minor, a.patch).cmp(&(b.major, b.minor, b.patch))
}

/// The next update from `current` toward `desired`.
///
/// # Guarantees
///
/// - Never a version below `current`: a service ahead of `desired` is [`Stepping::Ahead`].
/// - At most one minor above `current`: `desired` itself when it is within one minor, else
///   the first patch (`.0`) of the next minor, so 1.33 → 1.35 asks 1.34.0 first.
pub fn next_step(current: KubernetesVersion, desired: KubernetesVersion) -> Stepping {
    match compare(current, desired) {
        Ordering::Equal => Stepping::Reached,
        Ordering::Greater => Stepping::Ahead,
        Ordering::Less if current.major != desired.major => Stepping::MajorChange,
        Ordering::Less if desired.minor <= current.minor.saturating_add(1) => {
            Stepping::Next(desired)
        }
        Ordering::Less => Stepping::Next(KubernetesVersion {
            major: current.major,
            minor: current.minor.saturating_add(1),
            patch: 0,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(major: u32, minor: u32, patch: u32) -> KubernetesVersion {
        KubernetesVersion {
            major,
            minor,
            patch,
        }
    }

    #[test]
    fn parses_both_spellings_and_nothing_else() {
        assert_eq!(parse("1.35.2"), Some(v(1, 35, 2)));
        assert_eq!(parse("v1.35.2"), Some(v(1, 35, 2)));
        for bad in ["1.35", "1.35.2.1", "v1.x.2", "", "vv1.35.2"] {
            assert_eq!(parse(bad), None, "{bad}");
        }
        assert_eq!(spell(v(1, 35, 2)), "1.35.2");
    }

    #[test]
    fn two_minors_up_ask_the_one_between_first() {
        assert_eq!(
            next_step(v(1, 33, 4), v(1, 35, 1)),
            Stepping::Next(v(1, 34, 0))
        );
        assert_eq!(
            next_step(v(1, 34, 0), v(1, 35, 1)),
            Stepping::Next(v(1, 35, 1))
        );
        assert_eq!(next_step(v(1, 35, 1), v(1, 35, 1)), Stepping::Reached);
    }

    #[test]
    fn a_patch_is_one_step() {
        assert_eq!(
            next_step(v(1, 35, 0), v(1, 35, 2)),
            Stepping::Next(v(1, 35, 2))
        );
    }

    #[test]
    fn never_down_nor_across_majors() {
        assert_eq!(next_step(v(1, 36, 0), v(1, 35, 2)), Stepping::Ahead);
        assert_eq!(next_step(v(1, 35, 3), v(1, 35, 2)), Stepping::Ahead);
        assert_eq!(next_step(v(1, 35, 0), v(2, 0, 0)), Stepping::MajorChange);
        assert_eq!(next_step(v(2, 0, 0), v(1, 35, 0)), Stepping::Ahead);
    }
}
