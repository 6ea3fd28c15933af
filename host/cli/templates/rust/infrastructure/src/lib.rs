//! {{name}}: an infrastructure provider written with capw's Rust SDK. It is stateless: every
//! machine "exists" where the call says, with a provider id made from the call's idempotency
//! key, and the control-plane endpoint is a name under the configured domain. A real provider
//! calls its cloud's API over the HTTP client the host grants (see plugins/sim-infra in the
//! capw repository) and keeps nothing in the sandbox either: the cloud holds the state.

use capw_sdk::config::json_pointer;
use capw_sdk::prelude::*;
use serde::Deserialize;

/// The provider's config, as a ClusterClass gives it.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Config {
    /// The DNS domain the control-plane endpoint is named under.
    #[serde(default = "default_domain")]
    pub domain: String,
    /// The failure domains machines are spread over.
    #[serde(default = "default_failure_domains")]
    #[schemars(length(min = 1))]
    pub failure_domains: Vec<String>,
}

fn default_domain() -> String {
    "example.test".into()
}

fn default_failure_domains() -> Vec<String> {
    vec!["zone-a".into()]
}

pub struct StarterProvider;

impl Provider for StarterProvider {
    type Config = Config;
    const NAME: &'static str = "{{name}}";
    const DESCRIPTION: &'static str =
        "Infrastructure provider: stateless machines named by their idempotency key.";
}

/// A DNS label, or labels joined by dots: a-z, 0-9 and '-', neither first nor last.
fn is_dns_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 253
        && name.split('.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && !label.starts_with('-')
                && !label.ends_with('-')
                && label
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        })
}

impl Validate for Config {
    fn validate(&self) -> Result<(), Vec<FieldError>> {
        let mut errors = Vec::new();
        if !is_dns_name(&self.domain) {
            errors.push(FieldError::new(
                "/domain",
                "must be a DNS name such as example.test",
            ));
        }
        if self.failure_domains.is_empty() {
            errors.push(FieldError::new("/failureDomains", "must name at least one"));
        }
        for (index, domain) in self.failure_domains.iter().enumerate() {
            if domain.contains('.') || !is_dns_name(domain) {
                errors.push(FieldError::new(
                    json_pointer(["failureDomains", &index.to_string()]),
                    "must be a DNS label such as zone-a",
                ));
            }
        }
        if errors.is_empty() {
            Ok(())
        } else {
            Err(errors)
        }
    }
}

impl Infrastructure for StarterProvider {
    fn reconcile_cluster(ctx: &Context<Config>) -> Result<ClusterState, ProviderError> {
        Ok(ClusterState::Ready(ClusterInfrastructure {
            control_plane_endpoint: Some(Endpoint {
                host: format!("{}.{}", ctx.cluster().name, ctx.config.domain),
                port: 6443,
            }),
            failure_domains: (ctx.config.failure_domains.iter())
                .map(|name| FailureDomain {
                    name: name.clone(),
                    control_plane: true,
                })
                .collect(),
            conditions: Vec::new(),
        }))
    }

    fn delete_cluster(_ctx: &Context<Config>) -> Result<Deletion, ProviderError> {
        Ok(Deletion::Deleted)
    }

    fn reconcile_machine(
        ctx: &Context<Config>,
        spec: MachineSpec,
    ) -> Result<MachineStatus, ProviderError> {
        Ok(MachineStatus {
            // The same key on every call for one machine: the same machine, never a second.
            provider_id: Some(format!("static://{}", ctx.idempotency_key())),
            phase: MachinePhase::Running,
            addresses: vec![Address {
                kind: AddressKind::Hostname,
                address: spec.machine.name.clone(),
            }],
            failure_domain: spec.failure_domain,
            message: String::new(),
            requeue_after_ms: None,
            conditions: Vec::new(),
        })
    }

    fn delete_machine(
        _ctx: &Context<Config>,
        _machine: MachineRef,
    ) -> Result<Deletion, ProviderError> {
        Ok(Deletion::Deleted)
    }

    /// Nothing is kept anywhere, so nothing is listed. A real provider lists every machine its
    /// cloud holds for the cluster, so that the host deletes those it has no Machine for.
    fn list_machines(_ctx: &Context<Config>) -> Result<Vec<ListedMachine>, ProviderError> {
        Ok(Vec::new())
    }
}

capw_sdk::export_provider!(
    StarterProvider,
    unsupported: [Bootstrap, ControlPlane, LifecycleHooks]
);

#[cfg(test)]
mod tests {
    use capw_sdk::testing::{self, context};

    use super::*;

    #[test]
    fn the_endpoint_is_named_under_the_domain() {
        let ctx = context::<Config>(r#"{"domain": "lab.example"}"#);
        let ClusterState::Ready(infra) = StarterProvider::reconcile_cluster(&ctx).unwrap() else {
            panic!("not ready");
        };
        let endpoint = infra.control_plane_endpoint.unwrap();
        assert_eq!(endpoint.host, format!("{}.lab.example", ctx.cluster().name));
        assert_eq!(infra.failure_domains[0].name, "zone-a");
    }

    #[test]
    fn a_bad_failure_domain_is_named() {
        let errors = testing::assert_refused_at::<StarterProvider>(
            r#"{"failureDomains": ["zone-a", "Zone B"]}"#,
            &["/failureDomains/1"],
        );
        testing::assert_field_error(&errors, "/failureDomains/1", "DNS label");
    }
}
