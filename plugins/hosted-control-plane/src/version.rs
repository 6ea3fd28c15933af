//! Which Kubernetes version the objects are answered at, and which one the control plane runs,
//! read from the images of the Deployments the host tells of.
//!
//! The host tells each Deployment it applied with the images of its Pod template, as applied
//! (`hosted-object.images`): what it runs once ready. The API servers' Deployment's
//! `registry.k8s.io/kube-apiserver:v1.35.0` says the version the control plane was last
//! applied at, the controller manager's its own ([`observe`]). From them ([`target`]):
//!
//! - no API servers applied yet: the desired version (the first create);
//! - applied at A and settled (every workload ready, the controller manager at A too): the
//!   desired version D when the control plane can move from A to it (A itself, a later patch,
//!   any patch of the next minor); the host applies the new images and the Deployments roll;
//! - applied at A and rolling out (a workload not ready, or the controller manager not at A):
//!   A again unless D is A. A change never starts while another rolls out: the replicas
//!   still running the version before A would skip a minor.
//!
//! A D more than one minor above A, below it, or of another major version is refused, as
//! kubeadm refuses it for a machine; mid-rollout too, since it would be refused once settled.
//!
//! The host does not tell what a Deployment that is not ready rolls from, so the version the
//! control plane runs is known only as far as [`running`] can tell it.

use capw_sdk::control_plane::HostedObject;
use capw_sdk::types::KubernetesVersion;

use crate::names::{KUBE_APISERVER, KUBE_CONTROLLER_MANAGER, Names};

/// A version change the control plane cannot make, or a version it cannot read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VersionError {
    /// The desired version is older than the one the control plane was applied at: Kubernetes
    /// upgrades, it never downgrades (etcd's data and the stored objects only move forward).
    #[error("the control plane runs {from}; downgrading it to version {to} is not supported")]
    Downgrade {
        /// The version applied.
        from: KubernetesVersion,
        /// The desired version.
        to: KubernetesVersion,
    },
    /// The desired version is more than one minor above the one applied: the Kubernetes
    /// version skew policy allows one minor per upgrade.
    #[error(
        "the control plane runs {from}; upgrading it to version {to} would skip minor version \
         {}.{}: upgrade one minor version at a time",
        .from.major,
        .from.minor + 1
    )]
    SkipsMinor {
        /// The version applied.
        from: KubernetesVersion,
        /// The desired version.
        to: KubernetesVersion,
    },
    /// The desired version has another major version than the one applied.
    #[error("the control plane runs {from}; changing the major version to {to} is not supported")]
    MajorChange {
        /// The version applied.
        from: KubernetesVersion,
        /// The desired version.
        to: KubernetesVersion,
    },
    /// A Deployment of the control plane runs no image of its component tagged with a
    /// version (someone changed it by hand): the plan cannot tell which change is safe. Not
    /// bad input: the state of the Deployment forbids the plan until it is set back.
    #[error(
        "the Deployment {deployment} runs {images:?}, no {component} image tagged \
         v<major>.<minor>.<patch>: the version it runs cannot be read, so no change can be \
         known to be safe; set its image back to registry.k8s.io/{component}:<the version it runs>"
    )]
    Unreadable {
        /// The Deployment's name.
        deployment: String,
        /// The component its image should be of.
        component: &'static str,
        /// The images the host tells.
        images: Vec<String>,
    },
}

fn key(v: KubernetesVersion) -> (u32, u32, u32) {
    (v.major, v.minor, v.patch)
}

/// The version of `component` in `images`: the tag `vX.Y.Z` of the first image whose
/// repository's last path segment is `component` (any registry, a digest after the tag
/// allowed). `None` when no image is one, or its tag is not a release version.
pub fn image_version(images: &[String], component: &str) -> Option<KubernetesVersion> {
    images.iter().find_map(|image| {
        let named = image.split_once('@').map_or(image.as_str(), |(n, _)| n);
        let (repository, tag) = named.rsplit_once(':')?;
        if tag.contains('/') || repository.rsplit('/').next() != Some(component) {
            return None;
        }
        let mut parts = tag.strip_prefix('v')?.split('.').map(str::parse::<u32>);
        match (parts.next(), parts.next(), parts.next(), parts.next()) {
            (Some(Ok(major)), Some(Ok(minor)), Some(Ok(patch)), None) => Some(KubernetesVersion {
                major,
                minor,
                patch,
            }),
            _ => None,
        }
    })
}

/// A Deployment of a Kubernetes component as the host tells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Applied {
    /// The version of its component's image, as applied.
    pub version: KubernetesVersion,
    /// Rolled out: every replica runs `version`. Not ready, it rolls to `version` from a
    /// version the host does not tell.
    pub ready: bool,
}

/// The workloads of the control plane as the host tells them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Observed {
    /// The API servers' Deployment, when applied.
    pub api_server: Option<Applied>,
    /// The controller manager's Deployment, when applied.
    pub controller_manager: Option<Applied>,
    /// etcd's StatefulSet is applied and ready.
    pub etcd_ready: bool,
}

impl Observed {
    /// Whether the last change is over: every workload ready, both Deployments at one
    /// version. Only then may another start.
    pub fn settled(&self) -> bool {
        match (self.api_server, self.controller_manager) {
            (Some(a), Some(c)) => a.ready && c.ready && a.version == c.version && self.etcd_ready,
            _ => false,
        }
    }
}

/// The Deployments of `names`' control plane among `objects`, with their versions.
///
/// # Errors
///
/// [`VersionError::Unreadable`] for a Deployment applied with no image of its component
/// tagged with a version.
pub fn observe(names: &Names, objects: &[HostedObject]) -> Result<Observed, VersionError> {
    let told = |api_version: &str, kind: &str, name: &str| {
        (objects.iter()).find(|o| o.api_version == api_version && o.kind == kind && o.name == name)
    };
    let deployment = |name: String, component: &'static str| {
        let Some(o) = told("apps/v1", "Deployment", &name) else {
            return Ok(None);
        };
        match image_version(&o.images, component) {
            Some(version) => Ok(Some(Applied {
                version,
                ready: o.ready,
            })),
            None => Err(VersionError::Unreadable {
                deployment: name,
                component,
                images: o.images.clone(),
            }),
        }
    };
    Ok(Observed {
        api_server: deployment(names.api_server(), KUBE_APISERVER)?,
        controller_manager: deployment(names.controller_manager(), KUBE_CONTROLLER_MANAGER)?,
        etcd_ready: told("apps/v1", "StatefulSet", &names.etcd()).is_some_and(|o| o.ready),
    })
}

/// Checks that the control plane can move from `from` to `to`: the same version, a later
/// patch, or any patch of the next minor.
///
/// # Errors
///
/// The [`VersionError`] that says why not.
pub fn check_change(from: KubernetesVersion, to: KubernetesVersion) -> Result<(), VersionError> {
    if from.major != to.major {
        Err(VersionError::MajorChange { from, to })
    } else if key(to) < key(from) {
        Err(VersionError::Downgrade { from, to })
    } else if to.minor > from.minor.saturating_add(1) {
        Err(VersionError::SkipsMinor { from, to })
    } else {
        Ok(())
    }
}

/// The version to answer the objects at, for `desired`: see the module's rules.
///
/// # Errors
///
/// [`check_change`]'s, from the version the API servers were applied at to `desired`.
pub fn target(
    observed: &Observed,
    desired: KubernetesVersion,
) -> Result<KubernetesVersion, VersionError> {
    let Some(api_server) = observed.api_server else {
        return Ok(desired);
    };
    let applied = api_server.version;
    check_change(applied, desired)?;
    Ok(if desired == applied || observed.settled() {
        desired
    } else {
        applied
    })
}

/// The oldest version a Deployment of the control plane runs, as far as the host's word
/// tells it: `None` while none is ready.
///
/// A ready Deployment runs its version. One that is not ready rolls to its version from one
/// the host does not tell; since a change starts only once every workload is ready at one
/// version, that is the version of a ready Deployment older than it, when there is one (the
/// change started from there), and unknown otherwise: then `None`.
pub fn running(observed: &Observed) -> Option<KubernetesVersion> {
    let deployments = [observed.api_server, observed.controller_manager];
    let oldest_ready = (deployments.iter().flatten())
        .filter(|d| d.ready)
        .map(|d| d.version)
        .min_by_key(|v| key(*v))?;
    (deployments.iter().flatten())
        .filter(|d| !d.ready)
        .all(|d| key(d.version) > key(oldest_ready))
        .then_some(oldest_ready)
}

#[cfg(test)]
mod tests {
    use capw_sdk::testing::{cluster, version};

    use super::*;

    fn v(major: u32, minor: u32, patch: u32) -> KubernetesVersion {
        KubernetesVersion {
            major,
            minor,
            patch,
        }
    }

    fn ready(version: KubernetesVersion) -> Option<Applied> {
        Some(Applied {
            version,
            ready: true,
        })
    }

    fn rolling(version: KubernetesVersion) -> Option<Applied> {
        Some(Applied {
            version,
            ready: false,
        })
    }

    /// Both Deployments as given, etcd ready.
    fn observed(api_server: Option<Applied>, controller_manager: Option<Applied>) -> Observed {
        Observed {
            api_server,
            controller_manager,
            etcd_ready: true,
        }
    }

    #[test]
    fn the_version_is_the_tag_of_the_components_image() {
        let images = |list: &[&str]| list.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        let read = |list: &[&str]| image_version(&images(list), "kube-apiserver");
        assert_eq!(
            read(&["registry.k8s.io/kube-apiserver:v1.35.2"]),
            Some(v(1, 35, 2))
        );
        // Another registry, one with a port, a digest after the tag, other images first.
        assert_eq!(
            read(&[
                "busybox:1.36",
                "mirror.example.test:5000/k8s/kube-apiserver:v1.34.0@sha256:0123abcd"
            ]),
            Some(v(1, 34, 0))
        );
        for unreadable in [
            &["registry.k8s.io/kube-controller-manager:v1.35.0"][..],
            &["registry.k8s.io/not-kube-apiserver:v1.35.0"],
            &["registry.k8s.io/kube-apiserver"],
            &["registry.k8s.io/kube-apiserver@sha256:0123abcd"],
            &["registry.k8s.io/kube-apiserver:1.35.0"],
            &["registry.k8s.io/kube-apiserver:v1.35"],
            &["registry.k8s.io/kube-apiserver:v1.35.0-rc.1"],
            &["registry.k8s.io/kube-apiserver:v1.35.0.1"],
            &[],
        ] {
            assert_eq!(read(unreadable), None, "{unreadable:?}");
        }
    }

    #[test]
    fn the_deployments_are_read_from_the_clusters_objects_only() {
        let names = Names::new(&cluster("default", "c1")).unwrap();
        let told = |kind: &str, name: &str, image: &str, ready: bool| HostedObject {
            api_version: "apps/v1".into(),
            kind: kind.into(),
            name: name.into(),
            ready,
            message: None,
            images: vec![image.into()],
            addresses: Vec::new(),
        };
        let objects = [
            told(
                "Deployment",
                "c2-kube-apiserver",
                "registry.k8s.io/kube-apiserver:v1.30.0",
                true,
            ),
            told(
                "StatefulSet",
                "c1-kube-apiserver",
                "registry.k8s.io/kube-apiserver:v1.31.0",
                true,
            ),
            told(
                "Deployment",
                "c1-kube-apiserver",
                "registry.k8s.io/kube-apiserver:v1.35.0",
                false,
            ),
            told(
                "Deployment",
                "c1-kube-controller-manager",
                "registry.k8s.io/kube-controller-manager:v1.34.2",
                true,
            ),
            told(
                "StatefulSet",
                "c1-etcd",
                "registry.k8s.io/etcd:3.6.5-0",
                true,
            ),
        ];
        assert_eq!(
            observe(&names, &objects),
            Ok(Observed {
                api_server: rolling(v(1, 35, 0)),
                controller_manager: ready(v(1, 34, 2)),
                etcd_ready: true,
            })
        );
        assert_eq!(
            observe(&names, &objects[..1]),
            Ok(Observed {
                api_server: None,
                controller_manager: None,
                etcd_ready: false,
            })
        );
        // The API servers' Deployment with the controller manager's image: not a version.
        let swapped = [told(
            "Deployment",
            "c1-kube-apiserver",
            "registry.k8s.io/kube-controller-manager:v1.35.0",
            true,
        )];
        assert!(matches!(
            observe(&names, &swapped),
            Err(VersionError::Unreadable { deployment, component: "kube-apiserver", .. })
                if deployment == "c1-kube-apiserver"
        ));
    }

    #[test]
    fn the_first_create_is_at_the_desired_version() {
        let nothing = observed(None, None);
        assert_eq!(target(&nothing, version(35)), Ok(version(35)));
        assert_eq!(target(&nothing, v(2, 0, 0)), Ok(v(2, 0, 0)));
    }

    #[test]
    fn settled_it_moves_to_a_later_patch_or_the_next_minor() {
        let at = |a| observed(ready(a), ready(a));
        assert_eq!(target(&at(v(1, 34, 2)), v(1, 34, 2)), Ok(v(1, 34, 2)));
        assert_eq!(target(&at(v(1, 34, 2)), v(1, 34, 5)), Ok(v(1, 34, 5)));
        assert_eq!(target(&at(v(1, 34, 9)), v(1, 35, 0)), Ok(v(1, 35, 0)));
    }

    #[test]
    fn mid_rollout_it_keeps_the_version_rolled_out_unless_that_is_desired() {
        let (old, new, next) = (version(34), version(35), version(36));
        let not_settled = [
            // The API servers roll out.
            observed(rolling(new), ready(new)),
            // The controller manager rolls out.
            observed(ready(new), rolling(new)),
            // The controller manager is still at the old version (applied before it).
            observed(ready(new), ready(old)),
            // The controller manager is gone.
            observed(ready(new), None),
            // etcd is not ready.
            Observed {
                etcd_ready: false,
                ..observed(ready(new), ready(new))
            },
        ];
        for o in not_settled {
            assert!(!o.settled(), "{o:?}");
            assert_eq!(target(&o, next), Ok(new), "{o:?}");
            let patched = KubernetesVersion { patch: 1, ..new };
            assert_eq!(target(&o, patched), Ok(new), "{o:?}");
            assert_eq!(target(&o, new), Ok(new), "{o:?}");
        }
        assert!(observed(ready(new), ready(new)).settled());
        assert_eq!(target(&observed(ready(new), ready(new)), next), Ok(next));
    }

    #[test]
    fn a_skipped_minor_is_refused_naming_the_version_and_the_skipped_minor() {
        let settled = observed(ready(v(1, 33, 4)), ready(v(1, 33, 4)));
        let e = target(&settled, v(1, 35, 0));
        assert_eq!(
            e,
            Err(VersionError::SkipsMinor {
                from: v(1, 33, 4),
                to: v(1, 35, 0)
            })
        );
        assert_eq!(
            e.map_err(|e| e.to_string()).err().unwrap_or_default(),
            "the control plane runs v1.33.4; upgrading it to version v1.35.0 would skip minor \
             version 1.34: upgrade one minor version at a time"
        );

        // Mid-rollout to 1.35, 1.37 would be refused once settled: it is refused now.
        let rolling_to_35 = observed(rolling(version(35)), ready(version(35)));
        assert!(matches!(
            target(&rolling_to_35, version(37)),
            Err(VersionError::SkipsMinor { from, .. }) if from == version(35)
        ));
    }

    #[test]
    fn downgrades_and_major_changes_are_refused() {
        let e = check_change(v(1, 35, 2), v(1, 35, 1));
        assert_eq!(
            e.map_err(|e| e.to_string()).err().unwrap_or_default(),
            "the control plane runs v1.35.2; downgrading it to version v1.35.1 is not supported"
        );
        // Back to 1.34 mid-rollout to 1.35 would downgrade what runs 1.35 already.
        let rolling_to_35 = observed(rolling(version(35)), rolling(version(35)));
        assert!(matches!(
            target(&rolling_to_35, version(34)),
            Err(VersionError::Downgrade { from, .. }) if from == version(35)
        ));
        assert!(matches!(
            target(
                &observed(ready(version(35)), ready(version(35))),
                v(2, 0, 0)
            ),
            Err(VersionError::MajorChange { .. })
        ));
    }

    #[test]
    fn it_runs_the_oldest_version_known_and_none_while_nothing_is_ready() {
        let (old, new) = (version(34), version(35));
        // Nothing applied, nothing ready.
        assert_eq!(running(&observed(None, None)), None);
        assert_eq!(running(&observed(rolling(new), rolling(new))), None);
        // Settled.
        assert_eq!(running(&observed(ready(new), ready(new))), Some(new));
        // The new version applied to the API servers only: the controller manager runs the
        // old one, which the API servers roll from.
        assert_eq!(running(&observed(rolling(new), ready(old))), Some(old));
        assert_eq!(running(&observed(ready(new), ready(old))), Some(old));
        // The controller manager rolls to the new version from one not told: unknown.
        assert_eq!(running(&observed(ready(new), rolling(new))), None);
        // A ready API server without a controller manager.
        assert_eq!(running(&observed(ready(new), None)), Some(new));
    }
}
