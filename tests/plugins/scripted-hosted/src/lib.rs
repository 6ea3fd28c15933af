//! A hosted control-plane provider whose plan answers exactly the objects its config lists,
//! whatever they are: the host's tests of what it refuses in a hosted plan (a RoleBinding, a
//! cluster-scoped object, another namespace), what it prunes when a later plan drops an object,
//! and how it tells the plan each object's readiness. Never install it anywhere but a test.

use capw_sdk::control_plane::{
    CertificateAuthority, CertificateRequest, CertificateSecret, CertificateUsage,
    ControlPlaneStatus, Plan, PlanInput, SecretMaterial, Step,
};
use capw_sdk::metadata::ControlPlaneShape;
use capw_sdk::types::{Endpoint, ProviderError};
use capw_sdk::{Context, ControlPlane, Provider, Validate};
use serde::Deserialize;

/// The plan to answer.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Config {
    /// The manifests (YAML), answered as `apply-manifests` as they are.
    #[serde(default)]
    pub manifests: Vec<String>,
    /// Certificate Secrets to ask the host for: each holds one serving certificate `tls`.
    #[serde(default)]
    pub certificate_secrets: Vec<SecretSpec>,
    /// The endpoint to answer, `host:port`.
    #[serde(default)]
    pub endpoint: Option<String>,
}

/// A certificate Secret with one serving certificate.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SecretSpec {
    /// The Secret's name.
    pub name: String,
    /// The certificate's SANs.
    #[serde(default)]
    pub sans: Vec<String>,
    /// Ask for the cluster CA's key too (`cluster-ca`), not only its certificate.
    #[serde(default)]
    pub with_ca_key: bool,
}

impl Validate for Config {}

/// The provider.
pub struct ScriptedHosted;

impl Provider for ScriptedHosted {
    type Config = Config;
    const NAME: &'static str = "scripted-hosted";
    const DESCRIPTION: &'static str =
        "A hosted control plane whose plan is its config, for the host's tests.";
}

impl ControlPlane for ScriptedHosted {
    const SHAPE: ControlPlaneShape = ControlPlaneShape::Hosted;
    const SCALABLE: bool = true;
    const VERSION_UPGRADES: bool = true;

    /// Ready once every object it answers is applied and ready.
    fn plan(ctx: &Context<Config>, input: PlanInput) -> Result<Plan, ProviderError> {
        let config = &ctx.config;
        let expected = config.manifests.len() + config.certificate_secrets.len();
        let ready = input.objects.len() == expected && input.objects.iter().all(|o| o.ready);
        let endpoint = (config.endpoint.as_deref())
            .and_then(|e| e.rsplit_once(':'))
            .and_then(|(host, port)| {
                Some(Endpoint {
                    host: host.to_owned(),
                    port: port.parse().ok()?,
                })
            });
        let replicas = u32::from(ready);
        Ok(Plan {
            step: Step::ApplyManifests(config.manifests.clone()),
            status: ControlPlaneStatus {
                initialized: ready,
                ready,
                version: ready.then_some(input.version),
                endpoint,
                conditions: Vec::new(),
                failures_tolerated: None,
            },
            replicas: 1,
            ready_replicas: replicas,
            up_to_date_replicas: replicas,
            certificates: config
                .certificate_secrets
                .iter()
                .map(|s| CertificateSecret {
                    name: s.name.clone(),
                    certificates: vec![CertificateRequest {
                        key: "tls".into(),
                        authority: CertificateAuthority::Cluster,
                        usage: CertificateUsage::Server,
                        common_name: s.name.clone(),
                        organizations: Vec::new(),
                        sans: s.sans.clone(),
                        kubeconfig_server: None,
                    }],
                    materials: vec![if s.with_ca_key {
                        SecretMaterial::ClusterCa
                    } else {
                        SecretMaterial::ClusterCaCertificate
                    }],
                })
                .collect(),
            shared_datastore: None,
        })
    }
}

capw_sdk::export_provider!(
    ScriptedHosted,
    unsupported: [Infrastructure, Bootstrap, LifecycleHooks]
);
