//! The provider's config and the rules its schema cannot say.

use capw_sdk::metadata::FieldError;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// API servers when neither the config nor the Cluster gives a count: two, so that one can be
/// replaced (a rollout, a node drained) while the other serves.
pub const DEFAULT_API_SERVER_REPLICAS: u32 = 2;

/// The most API servers a control plane runs. They all share one etcd member; beyond this
/// they add load on it, not availability.
pub const MAX_API_SERVER_REPLICAS: u32 = 9;

/// Config of the hosted control-plane provider, e.g.
/// `{"apiServerReplicas": 3, "datastore": {"type": "dedicated"}, "apiServerService":
/// "LoadBalancer"}`. Every field is optional: `{}` is a valid config.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct HostedControlPlaneConfig {
    /// API server replicas, 1 to 9. Left out: the Cluster's replica count, or 2 when it gives
    /// none. Given, the Cluster must give the same count or none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 9))]
    pub api_server_replicas: Option<u32>,
    /// Where the control plane keeps the cluster's state.
    #[serde(default)]
    pub datastore: Datastore,
    /// How the API servers are reached when the infrastructure gives no endpoint: the type
    /// of their Service. Left out: `LoadBalancer`.
    #[serde(default)]
    pub api_server_service: ApiServerService,
}

/// The type of the API servers' Service, which decides the control plane's endpoint when the
/// infrastructure gives none.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum ApiServerService {
    /// A load balancer of the management cluster in front of the API servers: the endpoint
    /// is the first address it gives the Service (`status.loadBalancer.ingress`), reached by
    /// the workers and the host from outside the management cluster. The API servers start
    /// once it is known, so that they advertise it and their certificate names it.
    #[default]
    LoadBalancer,
    /// No load balancer: the endpoint is the Service's name, `<cluster>-apiserver.<ns>.svc`,
    /// which resolves only inside the management cluster (the host and the workers must run
    /// there).
    #[serde(rename = "ClusterIP")]
    ClusterIp,
}

/// Where a hosted control plane keeps the cluster's state: `{"type": "dedicated"}` or
/// `{"type": "shared", "name": "<datastore>"}`.
///
/// Tagged by `type`, so that another kind of datastore (one etcd shared by several control
/// planes, say) is a new variant with its own fields, and every config written today keeps
/// its meaning.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "camelCase", deny_unknown_fields)]
pub enum Datastore {
    /// An etcd of the control plane's own: one member in a StatefulSet beside the API
    /// servers, its data on a PersistentVolumeClaim of the management cluster's default
    /// StorageClass, deleted with the control plane. A variant with fields (none yet), so
    /// that a field it does not know is refused rather than ignored.
    Dedicated {},
    /// An etcd shared with other control planes, which the management cluster's operator runs
    /// (Kamaji's way): `{"type": "shared", "name": "shared-etcd"}` names its Secret (type
    /// `capw.dev/datastore`) in capw's provider namespace. The host gives this cluster an etcd
    /// user that reads and writes its own key prefix alone, and deletes its keys with it.
    Shared {
        /// The datastore's Secret: a DNS subdomain name.
        #[schemars(length(min = 1, max = 253))]
        name: String,
    },
}

impl Default for Datastore {
    /// [`Datastore::Dedicated`]: what a config without `datastore` runs.
    fn default() -> Self {
        Datastore::Dedicated {}
    }
}

impl HostedControlPlaneConfig {
    /// Every rule violation, each at its field's JSON Pointer.
    ///
    /// # Guarantees
    ///
    /// `Ok` means `apiServerReplicas`, when given, is between 1 and
    /// [`MAX_API_SERVER_REPLICAS`], and a shared datastore's name is a Secret's.
    ///
    /// # Errors
    ///
    /// A [`FieldError`] at `/apiServerReplicas` or `/datastore/name`.
    pub fn validate(&self) -> Result<(), Vec<FieldError>> {
        let mut errors = Vec::new();
        if let Some(n) = self.api_server_replicas
            && !(1..=MAX_API_SERVER_REPLICAS).contains(&n)
        {
            errors.push(FieldError::new(
                "/apiServerReplicas",
                format!("must be between 1 and {MAX_API_SERVER_REPLICAS}; got {n}"),
            ));
        }
        if let Datastore::Shared { name } = &self.datastore
            && !is_subdomain(name)
        {
            errors.push(FieldError::new(
                "/datastore/name",
                format!(
                    "must name a Secret: 1 to 253 lowercase letters, digits, '-' and '.', \
                     starting and ending with a letter or digit; got {name:?}"
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

/// Whether `name` is a DNS subdomain, as a Secret's name must be.
fn is_subdomain(name: &str) -> bool {
    let alnum = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit();
    (1..=253).contains(&name.len())
        && name.chars().all(|c| alnum(c) || c == '-' || c == '.')
        && name.starts_with(alnum)
        && name.ends_with(alnum)
}

#[cfg(test)]
mod tests {
    use capw_sdk::testing::{self, assert_accepted, assert_refused_at, config};

    use super::*;
    use crate::HostedControlPlane;

    #[test]
    fn an_empty_config_is_a_dedicated_datastore_and_no_count() {
        let parsed: HostedControlPlaneConfig = config("{}");
        assert_eq!(parsed, HostedControlPlaneConfig::default());
        assert_eq!(parsed.datastore, Datastore::Dedicated {});
        let parsed: HostedControlPlaneConfig =
            config(r#"{"apiServerReplicas": 3, "datastore": {"type": "dedicated"}}"#);
        assert_eq!(parsed.api_server_replicas, Some(3));
        assert_accepted::<HostedControlPlane>("{}");
        assert_accepted::<HostedControlPlane>(r#"{"datastore": {"type": "dedicated"}}"#);
        assert_eq!(parsed.api_server_service, ApiServerService::LoadBalancer);
        let parsed: HostedControlPlaneConfig = config(r#"{"apiServerService": "ClusterIP"}"#);
        assert_eq!(parsed.api_server_service, ApiServerService::ClusterIp);
        assert_refused_at::<HostedControlPlane>(
            r#"{"apiServerService": "NodePort"}"#,
            &["/apiServerService"],
        );
    }

    #[test]
    fn the_schema_names_the_datastore_by_type_and_bounds_the_replicas() {
        let schema = testing::config_schema::<HostedControlPlane>();
        assert_eq!(schema["additionalProperties"], false, "{schema}");
        let replicas = &schema["properties"]["apiServerReplicas"];
        assert_eq!(replicas["minimum"], 1, "{schema}");
        assert_eq!(replicas["maximum"], 9, "{schema}");
        assert!(
            schema.to_string().contains(r#""const":"dedicated""#),
            "{schema}"
        );
    }

    #[test]
    fn replicas_out_of_range_and_unknown_datastores_are_refused() {
        for bad in [0, 10] {
            let json = format!(r#"{{"apiServerReplicas": {bad}}}"#);
            let errors = assert_refused_at::<HostedControlPlane>(&json, &["/apiServerReplicas"]);
            testing::assert_field_error(&errors, "/apiServerReplicas", "between 1 and 9");
        }
        // A shared datastore is named; a type the provider does not know is refused.
        let parsed: HostedControlPlaneConfig =
            config(r#"{"datastore": {"type": "shared", "name": "shared-etcd"}}"#);
        assert_eq!(
            parsed.datastore,
            Datastore::Shared {
                name: "shared-etcd".into()
            }
        );
        assert_refused_at::<HostedControlPlane>(
            r#"{"datastore": {"type": "shared"}}"#,
            &["/datastore"],
        );
        assert_refused_at::<HostedControlPlane>(
            r#"{"datastore": {"type": "shared", "name": ""}}"#,
            &["/datastore/name"],
        );
        let errors = assert_refused_at::<HostedControlPlane>(
            r#"{"datastore": {"type": "external"}}"#,
            &["/datastore/type"],
        );
        testing::assert_field_error(&errors, "/datastore/type", "expected `dedicated`");
        assert_refused_at::<HostedControlPlane>(
            r#"{"datastore": {"type": "dedicated", "size": 3}}"#,
            &["/datastore"],
        );
        assert_refused_at::<HostedControlPlane>(
            r#"{"apiServerReplicas": "2"}"#,
            &["/apiServerReplicas"],
        );
        assert_refused_at::<HostedControlPlane>(r#"{"etcd": {}}"#, &["/etcd"]);
    }
}
