//! The provider's config and the rules its schema cannot say.

use capw_sdk::metadata::FieldError;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How a rollout (a version upgrade) replaces a machine.
///
/// The config carries it as the number `maxSurge`, `1` or `0`, as Cluster API's
/// `rolloutStrategy.rollingUpdate.maxSurge` does; [`KubeadmControlPlaneConfig::rollout`]
/// turns it into this.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rollout {
    /// `maxSurge: 1`: create the replacement first, wait until it is ready, then delete the
    /// oldest out-of-date machine. Membership never drops below the desired count; at most
    /// `replicas + 1` machines exist at once. Works for every replica count.
    Surge,
    /// `maxSurge: 0`: delete the oldest out-of-date machine first, then create its
    /// replacement. Never more than `replicas` machines, for clouds without spare capacity;
    /// needs `replicas >= 3`, since deleting the only member of a one-machine control plane
    /// would destroy etcd.
    DeleteFirst,
}

/// The smallest replica count [`Rollout::DeleteFirst`] accepts: one member can go while the
/// others keep etcd's quorum.
pub const DELETE_FIRST_MIN_REPLICAS: u32 = 3;

/// Config of the kubeadm control-plane provider, e.g. `{"replicas": 3, "maxSurge": 1}`. Both
/// fields are optional. Besides this schema, `replicas` must be odd, and `maxSurge: 0` needs
/// `replicas` of at least 3.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct KubeadmControlPlaneConfig {
    /// Control-plane machines to run when the Cluster's topology leaves its replica count
    /// unset (the plan input's `replicas` is 0). Odd, at least 1: etcd needs a majority of its
    /// members, so an even count tolerates no more failures than the odd count below it.
    /// Unset: the topology must give the count.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub replicas: Option<u32>,
    /// Machines a rollout may add above the replica count: 1 (default) creates each
    /// replacement before deleting the machine it replaces; 0 deletes first and needs at
    /// least 3 replicas.
    #[serde(default = "default_max_surge")]
    #[schemars(range(min = 0, max = 1))]
    pub max_surge: u32,
}

fn default_max_surge() -> u32 {
    1
}

impl Default for KubeadmControlPlaneConfig {
    /// No default replica count, `maxSurge: 1`: what `{}` parses into.
    fn default() -> Self {
        Self {
            replicas: None,
            max_surge: default_max_surge(),
        }
    }
}

impl KubeadmControlPlaneConfig {
    /// How a rollout replaces machines: `maxSurge` 0 is [`Rollout::DeleteFirst`], anything
    /// else [`Rollout::Surge`] (a validated config has only 0 or 1).
    pub fn rollout(&self) -> Rollout {
        if self.max_surge == 0 {
            Rollout::DeleteFirst
        } else {
            Rollout::Surge
        }
    }

    /// Every rule violation, each at its field's JSON Pointer.
    ///
    /// # Guarantees
    ///
    /// `Ok` means `replicas` is odd and at least 1 when set, `maxSurge` is 0 or 1, and
    /// `maxSurge` is not 0 while `replicas` is set below 3.
    ///
    /// # Errors
    ///
    /// - `/replicas` when it is 0 or even;
    /// - `/maxSurge` when it is neither 0 nor 1, or when it is 0 and `replicas` is set below 3.
    pub fn validate(&self) -> Result<(), Vec<FieldError>> {
        let mut errors = Vec::new();
        if let Some(replicas) = self.replicas {
            if replicas == 0 {
                errors.push(FieldError::new(
                    "/replicas",
                    "must be at least 1: a control plane needs a machine",
                ));
            } else if replicas % 2 == 0 {
                errors.push(FieldError::new(
                    "/replicas",
                    format!(
                        "must be odd so that etcd keeps a majority; {replicas} tolerates no more \
                         failures than {}: use {} or {}",
                        replicas - 1,
                        replicas - 1,
                        replicas + 1
                    ),
                ));
            }
        }
        if self.max_surge > 1 {
            errors.push(FieldError::new(
                "/maxSurge",
                format!(
                    "must be 0 or 1: machines are replaced one at a time; got {}",
                    self.max_surge
                ),
            ));
        } else if let (Rollout::DeleteFirst, Some(replicas)) = (self.rollout(), self.replicas)
            && replicas < DELETE_FIRST_MIN_REPLICAS
        {
            errors.push(FieldError::new(
                "/maxSurge",
                format!(
                    "0 deletes a machine before creating its replacement, which needs at least \
                     {DELETE_FIRST_MIN_REPLICAS} replicas to keep etcd's quorum; replicas is \
                     {replicas}: use maxSurge 1"
                ),
            ));
        }
        if errors.is_empty() {
            Ok(())
        } else {
            Err(errors)
        }
    }
}

#[cfg(test)]
mod tests {
    use capw_sdk::testing::{assert_accepted, assert_field_error, assert_refused_at, config};

    use super::*;
    use crate::KubeadmControlPlane;

    #[test]
    fn empty_config_takes_the_defaults() {
        let parsed: KubeadmControlPlaneConfig = config("{}");
        assert_eq!(parsed, KubeadmControlPlaneConfig::default());
        assert_eq!(parsed.rollout(), Rollout::Surge);
        assert_accepted::<KubeadmControlPlane>("{}");
    }

    #[test]
    fn accepts_odd_replicas_and_both_surges() {
        for json in [
            r#"{"replicas": 1}"#,
            r#"{"replicas": 3, "maxSurge": 1}"#,
            r#"{"replicas": 5, "maxSurge": 0}"#,
            r#"{"maxSurge": 0}"#,
        ] {
            assert_accepted::<KubeadmControlPlane>(json);
        }
    }

    #[test]
    fn even_replicas_are_refused_at_their_path() {
        let errors = assert_refused_at::<KubeadmControlPlane>(r#"{"replicas": 4}"#, &["/replicas"]);
        assert_field_error(&errors, "/replicas", "odd");
        assert_field_error(&errors, "/replicas", "use 3 or 5");
        assert_refused_at::<KubeadmControlPlane>(r#"{"replicas": 0}"#, &["/replicas"]);
    }

    #[test]
    fn max_surge_is_zero_or_one() {
        let errors = assert_refused_at::<KubeadmControlPlane>(
            r#"{"replicas": 3, "maxSurge": 2}"#,
            &["/maxSurge"],
        );
        assert_field_error(&errors, "/maxSurge", "0 or 1");
    }

    #[test]
    fn delete_first_needs_three_replicas() {
        let errors = assert_refused_at::<KubeadmControlPlane>(
            r#"{"replicas": 1, "maxSurge": 0}"#,
            &["/maxSurge"],
        );
        assert_field_error(&errors, "/maxSurge", "at least 3 replicas");
    }

    #[test]
    fn reports_every_problem() {
        assert_refused_at::<KubeadmControlPlane>(
            r#"{"replicas": 2, "maxSurge": 7}"#,
            &["/replicas", "/maxSurge"],
        );
    }

    #[test]
    fn type_errors_and_unknown_fields_are_refused() {
        assert_refused_at::<KubeadmControlPlane>(r#"{"replicas": -1}"#, &["/replicas"]);
        assert_refused_at::<KubeadmControlPlane>(r#"{"maxSurge": "1"}"#, &["/maxSurge"]);
        assert_refused_at::<KubeadmControlPlane>(r#"{"replicas": 3, "surge": 1}"#, &["/surge"]);
    }
}
