//! capw's infrastructure provider for simcloud: a network and a load balancer per cluster (the
//! load balancer is the control-plane endpoint), and one instance per machine, over the host's
//! wasi:http.
//!
//! The provider implements the `infrastructure` extension point only. It reads simcloud's
//! bearer token from a granted secret, keys every create by the call's idempotency key (so a
//! retry never creates twice), never waits for simcloud (it answers `in-progress` with a
//! requeue hint instead) and hands simcloud's `Retry-After` to the host.
//!
//! Where to look: [`config`] for the config and its rules, [`cluster`] and [`machine`] for the
//! extension point's functions, [`naming`] for how capw's identities become simcloud names and
//! tokens, [`api`] for the wire types. Requests, what their failures mean and the rules of the
//! fields that reach simcloud are shared with sim-managed-control-plane in [`capw_sim_client`].

#![warn(missing_docs)]

pub mod api;
pub mod cluster;
pub mod config;
pub mod machine;
pub mod naming;

use capw_sdk::infrastructure::{ClusterState, ListedMachine, MachineSpec, MachineStatus};
use capw_sdk::metadata::{FieldError, RequestedGrants};
use capw_sdk::types::{Deletion, MachineRef, ProviderError};
use capw_sdk::{Context, Infrastructure, Provider, Validate};

pub use capw_sim_client::ClientError;
pub use cluster::ClusterError;
pub use config::SimInfraConfig;

/// simcloud as one of this provider's calls sees it: the shared client with this config.
pub type Client<'c> = capw_sim_client::Client<'c, SimInfraConfig>;

/// The simcloud infrastructure provider. Stateless: everything it knows comes with the call or
/// from simcloud.
pub struct SimInfra;

impl Provider for SimInfra {
    type Config = SimInfraConfig;
    const NAME: &'static str = "sim-infra";
    const DESCRIPTION: &'static str = "Infrastructure on simcloud: a network and a load balancer \
         per cluster, an instance per machine, over wasi:http.";

    /// The token secret under its default grant name. The HTTP authority is the config's
    /// `endpoint`, which differs per installation, so it is for the operator to grant.
    fn requested_grants() -> RequestedGrants {
        capw_sim_client::config::requested_grants()
    }
}

impl Validate for SimInfraConfig {
    /// The rules of [`SimInfraConfig::validate`].
    fn validate(&self) -> Result<(), Vec<FieldError>> {
        SimInfraConfig::validate(self)
    }
}

impl Infrastructure for SimInfra {
    /// [`cluster::reconcile`].
    fn reconcile_cluster(ctx: &Context<SimInfraConfig>) -> Result<ClusterState, ProviderError> {
        let client = Client::connect(ctx)?;
        Ok(cluster::reconcile(&client, ctx)?)
    }

    /// [`cluster::delete`].
    fn delete_cluster(ctx: &Context<SimInfraConfig>) -> Result<Deletion, ProviderError> {
        let client = Client::connect(ctx)?;
        Ok(cluster::delete(&client, ctx)?)
    }

    /// [`machine::reconcile`].
    fn reconcile_machine(
        ctx: &Context<SimInfraConfig>,
        spec: MachineSpec,
    ) -> Result<MachineStatus, ProviderError> {
        let client = Client::connect(ctx)?;
        Ok(machine::reconcile(&client, ctx, &spec)?)
    }

    /// [`machine::delete`]; the instance is found by the idempotency key, not the name.
    fn delete_machine(
        ctx: &Context<SimInfraConfig>,
        _machine: MachineRef,
    ) -> Result<Deletion, ProviderError> {
        let client = Client::connect(ctx)?;
        Ok(machine::delete(&client, ctx)?)
    }

    /// [`machine::list`].
    fn list_machines(ctx: &Context<SimInfraConfig>) -> Result<Vec<ListedMachine>, ProviderError> {
        let client = Client::connect(ctx)?;
        Ok(machine::list(&client, ctx)?)
    }
}

capw_sdk::export_provider!(SimInfra, unsupported: [Bootstrap, ControlPlane, LifecycleHooks]);

#[cfg(test)]
mod tests {
    use capw_sdk::metadata::{self, ExtensionPoint};
    use capw_sdk::testing::{self, ContextBuilder};
    use capw_sdk::types::ErrorCode;
    use capw_sdk::{Bootstrap, ControlPlane};

    use super::*;

    #[test]
    fn describe_says_infrastructure_only_and_asks_for_the_token() {
        let m = metadata::describe::<SimInfra>();
        assert_eq!(m.name, "sim-infra");
        assert_eq!(m.extension_points, vec![ExtensionPoint::Infrastructure]);
        assert_eq!(m.capabilities.control_plane_shape, None);
        assert_eq!(m.requested_grants.secrets, ["simcloud-token"]);
        const { assert!(!<SimInfra as Bootstrap>::SUPPORTED) };
        const { assert!(!<SimInfra as ControlPlane>::SUPPORTED) };
    }

    #[test]
    fn schema_is_camel_case_with_defaults() {
        let schema = testing::config_schema::<SimInfra>();
        assert_eq!(schema["additionalProperties"], false, "{schema}");
        assert_eq!(
            schema["required"],
            serde_json::json!(["endpoint"]),
            "{schema}"
        );
        let props = &schema["properties"];
        assert_eq!(
            props["tokenSecret"]["default"], "simcloud-token",
            "{schema}"
        );
        assert_eq!(props["requestTimeoutMs"]["default"], 5000, "{schema}");
        assert_eq!(props["requestTimeoutMs"]["minimum"], 1, "{schema}");
        assert!(props["zones"].is_object(), "{schema}");
    }

    #[test]
    fn natively_there_is_no_token_and_the_call_says_so() {
        let ctx = ContextBuilder::new().config(SimInfraConfig::new("http://127.0.0.1:1"));
        let Err(e) = SimInfra::reconcile_cluster(&ctx) else {
            panic!("answered without a token");
        };
        assert_eq!((e.code, e.retryable), (ErrorCode::NotGranted, false));
        assert!(
            e.message.contains("secret `simcloud-token`"),
            "{}",
            e.message
        );
    }
}
