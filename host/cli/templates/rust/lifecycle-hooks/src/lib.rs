//! {{name}}: a lifecycle-hooks provider written with capw's Rust SDK: deletion protection.
//! Every transition proceeds, except a cluster's deletion while the ClusterClass's config says
//! `protectFromDelete: true`; the host holds only that cluster's deletion and asks again.

use std::time::Duration;

use capw_sdk::prelude::*;
use serde::Deserialize;

/// The provider's config, as a ClusterClass gives it.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Config {
    /// Hold every deletion of the class's clusters.
    #[serde(default)]
    pub protect_from_delete: bool,
}

impl Validate for Config {}

/// How soon the host asks again about a held deletion.
const RECHECK: Duration = Duration::from_secs(60);

pub struct StarterProvider;

impl Provider for StarterProvider {
    type Config = Config;
    const NAME: &'static str = "{{name}}";
    const DESCRIPTION: &'static str = "Lifecycle hooks: holds the deletion of protected clusters.";
}

impl LifecycleHooks for StarterProvider {
    fn handle(ctx: &Context<Config>, request: HookRequest) -> Result<HookResponse, ProviderError> {
        if request.hook == Hook::BeforeClusterDelete && ctx.config.protect_from_delete {
            return Ok(HookResponse::Hold(
                InProgress::new(
                    "DeletionProtected",
                    "set protectFromDelete to false in the ClusterClass to delete this cluster",
                )
                .requeue_after(RECHECK),
            ));
        }
        Ok(HookResponse::Proceed)
    }
}

capw_sdk::export_provider!(
    StarterProvider,
    unsupported: [Infrastructure, Bootstrap, ControlPlane]
);

#[cfg(test)]
mod tests {
    use capw_sdk::testing::{context, version};

    use super::*;

    fn request(hook: Hook) -> HookRequest {
        HookRequest {
            hook,
            from_version: None,
            to_version: version(35),
        }
    }

    #[test]
    fn a_protected_cluster_is_held_at_deletion_only() {
        let ctx = context::<Config>(r#"{"protectFromDelete": true}"#);
        let held = StarterProvider::handle(&ctx, request(Hook::BeforeClusterDelete)).unwrap();
        assert!(matches!(held, HookResponse::Hold(ref p) if p.reason == "DeletionProtected"));
        let create = StarterProvider::handle(&ctx, request(Hook::BeforeClusterCreate)).unwrap();
        assert!(matches!(create, HookResponse::Proceed));
    }

    #[test]
    fn an_unprotected_cluster_is_deleted() {
        let ctx = context::<Config>("{}");
        let answer = StarterProvider::handle(&ctx, request(Hook::BeforeClusterDelete)).unwrap();
        assert!(matches!(answer, HookResponse::Proceed));
    }
}
