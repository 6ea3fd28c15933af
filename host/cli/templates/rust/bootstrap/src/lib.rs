//! {{name}}: a bootstrap provider written with capw's Rust SDK: cloud-config for each machine
//! from a typed config.

use capw_sdk::config::json_pointer;
use capw_sdk::prelude::*;
use serde::Deserialize;

/// The provider's config, as a ClusterClass gives it.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Config {
    /// IANA time zone of the machines, e.g. Europe/Berlin.
    #[serde(default = "default_timezone")]
    pub timezone: String,
    /// Debian packages to install on every machine.
    #[serde(default)]
    pub packages: Vec<String>,
}

fn default_timezone() -> String {
    "UTC".into()
}

/// Name of the one secret item `cluster-secrets` makes.
const TOKEN: &str = "bootstrap-token";

pub struct StarterProvider;

impl Provider for StarterProvider {
    type Config = Config;
    const NAME: &'static str = "{{name}}";
    const DESCRIPTION: &'static str = "Bootstrap provider: cloud-config from a typed config.";
}

impl Validate for Config {
    fn validate(&self) -> Result<(), Vec<FieldError>> {
        let mut errors = Vec::new();
        let tz = &self.timezone;
        if tz.is_empty()
            || tz.len() > 64
            || !tz
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "_+-/".contains(c))
        {
            errors.push(FieldError::new(
                "/timezone",
                "must be a time zone name such as Europe/Berlin",
            ));
        }
        for (index, package) in self.packages.iter().enumerate() {
            let ok = package.starts_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit())
                && package
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "+.-".contains(c));
            if !ok {
                errors.push(FieldError::new(
                    json_pointer(["packages", &index.to_string()]),
                    "must be a Debian package name",
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

impl Bootstrap for StarterProvider {
    fn cluster_secrets(ctx: &Context<Config>) -> Result<SecretsState, ProviderError> {
        Ok(SecretsState::Ready(vec![SecretItem {
            name: TOKEN.into(),
            data: format!("token:{}", ctx.cluster().uid).into_bytes(),
        }]))
    }

    fn generate(
        ctx: &Context<Config>,
        request: BootstrapRequest,
    ) -> Result<BootstrapData, ProviderError> {
        if !request.secrets.iter().any(|s| s.name == TOKEN) {
            return Err(ProviderError::permanent(
                ErrorCode::InvalidInput,
                "request.secrets: no bootstrap-token",
            ));
        }
        let members: Vec<&str> = request
            .control_plane_members
            .iter()
            .map(|m| m.name.as_str())
            .collect();
        let mut data = format!(
            "#cloud-config\n# role: {}\n# version: {}\n# endpoint: {}:{}\n# members: {}\ntimezone: {}\n",
            request.role,
            request.version,
            request.endpoint.host,
            request.endpoint.port,
            members.join(","),
            ctx.config.timezone,
        );
        if ctx.config.packages.is_empty() {
            data.push_str("packages: []\n");
        } else {
            data.push_str("packages:\n");
            for package in &ctx.config.packages {
                data.push_str(&format!("- {package}\n"));
            }
        }
        Ok(BootstrapData {
            format: BootstrapFormat::CloudConfig,
            data: data.into_bytes(),
        })
    }

    fn kubeconfig(
        ctx: &Context<Config>,
        endpoint: Endpoint,
        _secrets: Vec<SecretItem>,
    ) -> Result<String, ProviderError> {
        let name = &ctx.cluster().name;
        let host = if endpoint.host.contains(':') {
            format!("[{}]", endpoint.host)
        } else {
            endpoint.host.clone()
        };
        let user = format!("{name}-admin");
        let context = format!("{user}@{name}");
        Ok([
            "apiVersion: v1".to_string(),
            "kind: Config".into(),
            "clusters:".into(),
            format!("- name: {name}"),
            "  cluster:".into(),
            format!("    server: https://{host}:{}", endpoint.port),
            "users:".into(),
            format!("- name: {user}"),
            "  user: {}".into(),
            "contexts:".into(),
            format!("- name: {context}"),
            "  context:".into(),
            format!("    cluster: {name}"),
            format!("    user: {user}"),
            format!("current-context: {context}"),
            String::new(),
        ]
        .join("\n"))
    }
}

capw_sdk::export_provider!(
    StarterProvider,
    unsupported: [Infrastructure, ControlPlane, LifecycleHooks]
);

#[cfg(test)]
mod tests {
    use capw_sdk::testing::{self, context};

    use super::*;

    #[test]
    fn the_token_is_made_once_per_cluster() {
        let ctx = context::<Config>("{}");
        let SecretsState::Ready(items) = StarterProvider::cluster_secrets(&ctx).unwrap() else {
            panic!("not ready");
        };
        assert_eq!(items[0].name, TOKEN);
        assert_eq!(
            items[0].data,
            format!("token:{}", ctx.cluster().uid).into_bytes()
        );
    }

    #[test]
    fn a_bad_package_is_named() {
        let errors = testing::assert_refused_at::<StarterProvider>(
            r#"{"packages": ["curl", "Bad Name"]}"#,
            &["/packages/1"],
        );
        testing::assert_field_error(&errors, "/packages/1", "Debian package");
    }
}
