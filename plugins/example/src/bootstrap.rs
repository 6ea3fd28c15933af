//! Bootstrap: placeholder secret material derived from the cluster's uid, cloud-config that
//! says what it was generated from, and an admin kubeconfig.

use capw_sdk::bootstrap::{
    BootstrapData, BootstrapFormat, BootstrapRequest, SecretItem, SecretsState,
};
use capw_sdk::types::{Endpoint, ProviderError};
use capw_sdk::{Bootstrap, Context};

use crate::config::ExampleConfig;
use crate::{ExampleProvider, simulate};

impl Bootstrap for ExampleProvider {
    /// `ca.crt` and `bootstrap-token`, each `example-…:{cluster uid}`: not real keys, but
    /// distinct per cluster, so a mix-up between clusters shows.
    fn cluster_secrets(ctx: &Context<ExampleConfig>) -> Result<SecretsState, ProviderError> {
        if let Some(progress) = simulate::outcome(&ctx.config)? {
            return Ok(SecretsState::InProgress(progress));
        }
        let uid = &ctx.cluster().uid;
        Ok(SecretsState::Ready(vec![
            SecretItem {
                name: "ca.crt".into(),
                data: format!("example-ca:{uid}").into_bytes(),
            },
            SecretItem {
                name: "bootstrap-token".into(),
                data: format!("example-token:{uid}").into_bytes(),
            },
        ]))
    }

    /// A cloud-config made of comments naming the role, version, endpoint, members and the
    /// names (never the values) of the secrets.
    fn generate(
        ctx: &Context<ExampleConfig>,
        request: BootstrapRequest,
    ) -> Result<BootstrapData, ProviderError> {
        simulate::failure(&ctx.config)?;
        Ok(BootstrapData {
            format: BootstrapFormat::CloudConfig,
            data: cloud_config(&request).into_bytes(),
        })
    }

    /// One cluster, one user, one context, current.
    fn kubeconfig(
        ctx: &Context<ExampleConfig>,
        endpoint: Endpoint,
        _secrets: Vec<SecretItem>,
    ) -> Result<String, ProviderError> {
        simulate::failure(&ctx.config)?;
        Ok(kubeconfig(&ctx.cluster().name, &endpoint))
    }
}

/// The bootstrap data of `request`.
pub fn cloud_config(request: &BootstrapRequest) -> String {
    let members = request
        .control_plane_members
        .iter()
        .map(|m| m.name.as_str())
        .collect::<Vec<_>>()
        .join(",");
    let secrets = request
        .secrets
        .iter()
        .map(|s| s.name.as_str())
        .collect::<Vec<_>>()
        .join(",");
    format!(
        "#cloud-config\n# role: {}\n# version: {}\n# endpoint: {}:{}\n# members: {members}\n# secrets: {secrets}\n",
        request.role, request.version, request.endpoint.host, request.endpoint.port
    )
}

/// An admin kubeconfig for cluster `name` at `endpoint`.
pub fn kubeconfig(name: &str, endpoint: &Endpoint) -> String {
    // An IPv6 literal needs brackets in a URL.
    let host = if endpoint.host.contains(':') {
        format!("[{}]", endpoint.host)
    } else {
        endpoint.host.clone()
    };
    let port = endpoint.port;
    let user = format!("{name}-admin");
    let context = format!("{user}@{name}");
    format!(
        "apiVersion: v1
kind: Config
clusters:
- name: {name}
  cluster:
    server: https://{host}:{port}
users:
- name: {user}
  user: {{}}
contexts:
- name: {context}
  context:
    cluster: {name}
    user: {user}
current-context: {context}
"
    )
}

#[cfg(test)]
mod tests {
    use capw_sdk::bootstrap::ControlPlaneMember;
    use capw_sdk::testing::{context, machine, version};
    use capw_sdk::types::MachineRole;

    use super::*;

    #[test]
    fn secrets_derive_from_the_uid() {
        let c = context(r#"{"region": "r"}"#);
        let Ok(SecretsState::Ready(items)) = ExampleProvider::cluster_secrets(&c) else {
            panic!("not ready");
        };
        assert_eq!(items[0].name, "ca.crt");
        assert_eq!(items[0].data, b"example-ca:uid-c1");
        assert_eq!(items[1].name, "bootstrap-token");
        assert_eq!(items[1].data, b"example-token:uid-c1");
    }

    #[test]
    fn cloud_config_is_exact() {
        let request = BootstrapRequest {
            machine: machine("m2"),
            role: MachineRole::JoinControlPlane,
            version: version(35),
            endpoint: Endpoint {
                host: "c1.r.example.test".into(),
                port: 6443,
            },
            secrets: vec![
                SecretItem {
                    name: "ca.crt".into(),
                    data: b"secret".to_vec(),
                },
                SecretItem {
                    name: "bootstrap-token".into(),
                    data: Vec::new(),
                },
            ],
            control_plane_members: vec![
                ControlPlaneMember {
                    name: "m0".into(),
                    address: "10.0.0.1".into(),
                },
                ControlPlaneMember {
                    name: "m1".into(),
                    address: "10.0.0.2".into(),
                },
            ],
            join: None,
        };
        let c = context(r#"{"region": "r"}"#);
        let Ok(data) = ExampleProvider::generate(&c, request) else {
            panic!("generate failed");
        };
        assert_eq!(data.format, BootstrapFormat::CloudConfig);
        assert_eq!(
            String::from_utf8_lossy(&data.data),
            "#cloud-config\n# role: join-control-plane\n# version: v1.35.0\n\
             # endpoint: c1.r.example.test:6443\n# members: m0,m1\n# secrets: ca.crt,bootstrap-token\n"
        );
    }

    #[test]
    fn kubeconfig_names_everything() {
        let k = kubeconfig(
            "c1",
            &Endpoint {
                host: "c1.r.example.test".into(),
                port: 6443,
            },
        );
        assert!(
            k.contains("server: https://c1.r.example.test:6443\n"),
            "{k}"
        );
        assert!(k.contains("- name: c1-admin\n"), "{k}");
        assert!(k.contains("current-context: c1-admin@c1\n"), "{k}");
        let v6 = kubeconfig(
            "c1",
            &Endpoint {
                host: "fd00::1".into(),
                port: 6443,
            },
        );
        assert!(v6.contains("server: https://[fd00::1]:6443\n"), "{v6}");
    }
}
