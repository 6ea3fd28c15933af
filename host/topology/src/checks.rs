//! Checks of the Cluster's own fields: class reference, version, replicas, pool names.

use std::ops::RangeInclusive;

use capw_api::{Cluster, ClusterClass};

use crate::error::{Errors, TopologyErrorKind as Kind};

/// Most control-plane replicas accepted; etcd gains nothing past 7 members, and more than
/// this is a typo.
pub const MAX_CONTROL_PLANE_REPLICAS: u32 = 15;

/// Most replicas accepted in one worker pool; more is far more likely a typo than a plan.
pub const MAX_POOL_REPLICAS: u32 = 1000;

/// Whether `cluster.spec.topology.classRef` names `class` (namespace defaulting to the
/// Cluster's own).
pub(crate) fn check_class_ref(cluster: &Cluster, class: &ClusterClass, errors: &mut Errors) {
    let class_ref = &cluster.spec.topology.class_ref;
    let wanted_namespace = class_ref
        .namespace
        .as_ref()
        .or(cluster.metadata.namespace.as_ref());
    let name = class.metadata.name.as_deref().unwrap_or_default();
    let namespace = class.metadata.namespace.as_ref();
    let namespace_differs =
        wanted_namespace.is_some() && namespace.is_some() && wanted_namespace != namespace;
    if class_ref.name != name || namespace_differs {
        let why = format!(
            "refers to ClusterClass {:?}, but was given {name:?}",
            class_ref.name
        );
        errors.cluster(Kind::ClassMismatch, "spec.topology.classRef", why);
    }
}

/// `version` if it is `vMAJOR.MINOR.PATCH` (pre-release and build suffixes allowed).
pub(crate) fn check_version(version: &str, path: &str, errors: &mut Errors) -> Option<String> {
    let parsed = version.strip_prefix('v').map(semver::Version::parse);
    match parsed {
        Some(Ok(_)) => Some(version.to_owned()),
        Some(Err(e)) => {
            errors.cluster(
                Kind::InvalidVersion,
                path,
                format!("{version:?} is not a valid version: {e}"),
            );
            None
        }
        None => {
            errors.cluster(
                Kind::InvalidVersion,
                path,
                format!("{version:?} must look like v1.34.1"),
            );
            None
        }
    }
}

/// Most failures a Cluster may ask its control plane to tolerate (15 etcd members).
pub const MAX_FAILURES_TOLERATED: u32 = 7;

/// The control plane's `failuresTolerated`, if given alone and within 0..=7; refused beside
/// `replicas` (one or the other).
pub(crate) fn check_failures_tolerated(
    topology: &capw_api::ControlPlaneTopology,
    replicas_path: &str,
    errors: &mut Errors,
) -> Option<u32> {
    let wanted = topology.failures_tolerated?;
    let path = "spec.topology.controlPlane.failuresTolerated";
    if topology.replicas.is_some() {
        errors.cluster(
            Kind::InvalidReplicas,
            path,
            format!("is given beside {replicas_path}: give one or the other"),
        );
        return None;
    }
    match u32::try_from(wanted) {
        Ok(n) if n <= MAX_FAILURES_TOLERATED => Some(n),
        _ => {
            errors.cluster(
                Kind::InvalidReplicas,
                path,
                format!("{wanted} is outside 0..={MAX_FAILURES_TOLERATED}"),
            );
            None
        }
    }
}

/// `replicas` (1 when absent) if within `allowed`.
pub(crate) fn check_replicas(
    replicas: Option<i32>,
    allowed: RangeInclusive<u32>,
    path: &str,
    errors: &mut Errors,
) -> u32 {
    let wanted = replicas.unwrap_or(1);
    match u32::try_from(wanted) {
        Ok(n) if allowed.contains(&n) => n,
        _ => {
            let (min, max) = (allowed.start(), allowed.end());
            errors.cluster(
                Kind::InvalidReplicas,
                path,
                format!("{wanted} is outside {min}..={max}"),
            );
            *min
        }
    }
}

/// Whether `name` is a DNS-1123 label (it becomes part of machine names).
pub(crate) fn check_pool_name(name: &str, path: &str, errors: &mut Errors) {
    let valid = !name.is_empty()
        && name.len() <= 63
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !name.starts_with('-')
        && !name.ends_with('-');
    if !valid {
        let why =
            format!("{name:?} is not a DNS label (lowercase letters, digits, `-`, at most 63)");
        errors.cluster(Kind::InvalidPoolName, path, why);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn count<T>(f: impl FnOnce(&mut Errors) -> T) -> (T, usize) {
        let mut errors = Errors::default();
        let out = f(&mut errors);
        (out, errors.len())
    }

    #[test]
    fn versions() {
        assert_eq!(
            count(|e| check_version("v1.34.1", "v", e)),
            (Some("v1.34.1".into()), 0)
        );
        assert_eq!(count(|e| check_version("v1.35.0-rc.1", "v", e)).1, 0);
        for bad in ["1.34.1", "v1.34", "latest", "v1.34.1.2", ""] {
            assert_eq!(count(|e| check_version(bad, "v", e)), (None, 1), "{bad}");
        }
    }

    #[test]
    fn replicas() {
        assert_eq!(count(|e| check_replicas(None, 0..=5, "r", e)), (1, 0));
        assert_eq!(count(|e| check_replicas(Some(0), 0..=5, "r", e)), (0, 0));
        assert_eq!(count(|e| check_replicas(Some(0), 1..=5, "r", e)), (1, 1));
        assert_eq!(count(|e| check_replicas(Some(-1), 0..=5, "r", e)).1, 1);
        assert_eq!(count(|e| check_replicas(Some(6), 0..=5, "r", e)).1, 1);
    }

    #[test]
    fn pool_names() {
        for good in ["md-0", "a", "gpu2"] {
            assert_eq!(count(|e| check_pool_name(good, "n", e)).1, 0, "{good}");
        }
        for bad in ["", "MD", "-a", "a-", "a_b", &"x".repeat(64)] {
            assert_eq!(count(|e| check_pool_name(bad, "n", e)).1, 1, "{bad}");
        }
    }
}
