//! Which version changes kubeadm can make: one minor version up at a time, never down.

use capw_sdk::control_plane::Member;
use capw_sdk::types::KubernetesVersion;

/// A version change kubeadm cannot make. Each names the machine whose version forbids it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VersionError {
    /// The desired version is older than a member's: kubeadm upgrades, it never downgrades
    /// (etcd's data and the API server's stored objects only move forward).
    #[error(
        "machine `{machine}` runs {from}; downgrading the control plane to {to} is not supported"
    )]
    Downgrade {
        /// The member running the newer version.
        machine: String,
        /// Its version.
        from: KubernetesVersion,
        /// The desired version.
        to: KubernetesVersion,
    },
    /// The desired version is more than one minor version above a member's: kubeadm, and the
    /// Kubernetes version skew policy, allow one minor version per upgrade.
    #[error(
        "machine `{machine}` runs {from}; upgrading it to {to} would skip minor version {}.{}: \
         upgrade one minor version at a time",
        .from.major,
        .from.minor + 1
    )]
    SkipsMinor {
        /// The member running the older version.
        machine: String,
        /// Its version.
        from: KubernetesVersion,
        /// The desired version.
        to: KubernetesVersion,
    },
    /// The desired version has another major version than a member's.
    #[error("machine `{machine}` runs {from}; changing the major version to {to} is not supported")]
    MajorChange {
        /// The member running the other major version.
        machine: String,
        /// Its version.
        from: KubernetesVersion,
        /// The desired version.
        to: KubernetesVersion,
    },
}

/// Checks that every member in `members` can move to `target`.
///
/// A member may stay (same version), move up patch versions, or move up one minor version to
/// any patch of it. Callers pass the live members: a member being deleted never runs again,
/// so its version does not matter.
///
/// # Errors
///
/// The first [`VersionError`] found, looking at the members oldest first (then by name), so
/// the answer does not depend on the input's order.
pub fn check_change(members: &[&Member], target: KubernetesVersion) -> Result<(), VersionError> {
    let mut ordered = members.to_vec();
    ordered.sort_by(|a, b| {
        a.created_at
            .cmp(&b.created_at)
            .then_with(|| a.machine.name.cmp(&b.machine.name))
    });
    ordered
        .into_iter()
        .try_for_each(|member| check_one(member, target))
}

fn check_one(member: &Member, to: KubernetesVersion) -> Result<(), VersionError> {
    let from = member.version;
    let machine = || member.machine.name.clone();
    if from.major != to.major {
        return Err(VersionError::MajorChange {
            machine: machine(),
            from,
            to,
        });
    }
    if (to.minor, to.patch) < (from.minor, from.patch) {
        return Err(VersionError::Downgrade {
            machine: machine(),
            from,
            to,
        });
    }
    if to.minor > from.minor.saturating_add(1) {
        return Err(VersionError::SkipsMinor {
            machine: machine(),
            from,
            to,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use capw_sdk::testing::machine;

    use super::*;

    fn v(major: u32, minor: u32, patch: u32) -> KubernetesVersion {
        KubernetesVersion {
            major,
            minor,
            patch,
        }
    }

    fn member(name: &str, version: KubernetesVersion, created_at: u64) -> Member {
        Member {
            machine: machine(name),
            version,
            failure_domain: None,
            ready: true,
            created_at,
            deleting: false,
            etcd: capw_sdk::control_plane::EtcdMembership::Unknown,
            out_of_date: Vec::new(),
            unhealthy: Vec::new(),
        }
    }

    fn check(from: KubernetesVersion, to: KubernetesVersion) -> Result<(), VersionError> {
        check_change(&[&member("m0", from, 1)], to)
    }

    #[test]
    fn same_patch_and_next_minor_are_allowed() {
        assert_eq!(check(v(1, 34, 2), v(1, 34, 2)), Ok(()));
        assert_eq!(check(v(1, 34, 2), v(1, 34, 5)), Ok(()));
        assert_eq!(check(v(1, 34, 9), v(1, 35, 0)), Ok(()));
        assert_eq!(check_change(&[], v(1, 35, 0)), Ok(()));
    }

    #[test]
    fn skipping_a_minor_is_refused_with_the_skipped_version() {
        let e = check(v(1, 33, 4), v(1, 35, 0));
        assert_eq!(
            e,
            Err(VersionError::SkipsMinor {
                machine: "m0".into(),
                from: v(1, 33, 4),
                to: v(1, 35, 0),
            })
        );
        let message = e.map_err(|e| e.to_string()).err().unwrap_or_default();
        assert_eq!(
            message,
            "machine `m0` runs v1.33.4; upgrading it to v1.35.0 would skip minor version 1.34: \
             upgrade one minor version at a time"
        );
    }

    #[test]
    fn downgrades_are_refused_minor_and_patch() {
        assert!(matches!(
            check(v(1, 35, 0), v(1, 34, 9)),
            Err(VersionError::Downgrade { .. })
        ));
        let e = check(v(1, 35, 2), v(1, 35, 1));
        assert!(matches!(e, Err(VersionError::Downgrade { .. })), "{e:?}");
        let message = e.map_err(|e| e.to_string()).err().unwrap_or_default();
        assert_eq!(
            message,
            "machine `m0` runs v1.35.2; downgrading the control plane to v1.35.1 is not supported"
        );
    }

    #[test]
    fn major_changes_are_refused() {
        assert!(matches!(
            check(v(1, 35, 0), v(2, 0, 0)),
            Err(VersionError::MajorChange { .. })
        ));
    }

    #[test]
    fn mixed_members_mid_rollout_are_checked_each() {
        let old = member("old", v(1, 34, 0), 1);
        let new = member("new", v(1, 35, 0), 2);
        assert_eq!(check_change(&[&new, &old], v(1, 35, 0)), Ok(()));
        // Going back to 1.34 mid-rollout would downgrade the new machine.
        assert!(matches!(
            check_change(&[&new, &old], v(1, 34, 0)),
            Err(VersionError::Downgrade { machine, .. }) if machine == "new"
        ));
        // 1.36 skips 1.35 for the old machine, whichever order the input has.
        assert!(matches!(
            check_change(&[&new, &old], v(1, 36, 0)),
            Err(VersionError::SkipsMinor { machine, .. }) if machine == "old"
        ));
    }
}
