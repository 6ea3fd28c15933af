//! The host's side of a webhook call: the call's input (the runtime's types, as a component
//! call takes them) written as a Runtime-SDK-style JSON request, posted over a pooled
//! keep-alive connection, and the JSON answer parsed into typed values.

use anyhow::{Context as _, bail, ensure};
use bytes::Bytes;
use capw_runtime::control_plane::PlanInput;
use capw_runtime::lifecycle_hooks::{Hook, HookRequest, HookResponse};
use capw_runtime::types::{CallContext, InProgress, KubernetesVersion};
use http_body_util::{BodyExt, Full};
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::wire;

/// A client of one webhook base URL (`http://…` or `https://…`), keeping one connection.
pub struct WebhookClient {
    client: Client<HttpsConnector<HttpConnector>, Full<Bytes>>,
    base: String,
}

impl WebhookClient {
    /// `tls` is the trust for `https` URLs; `http` ones go over plain TCP.
    pub fn new(base: String, tls: rustls::ClientConfig) -> Self {
        let mut tcp = HttpConnector::new();
        tcp.set_nodelay(true);
        tcp.enforce_http(false);
        let connector = hyper_rustls::HttpsConnectorBuilder::new()
            .with_tls_config(tls)
            .https_or_http()
            .enable_http1()
            .wrap_connector(tcp);
        let client = Client::builder(TokioExecutor::new())
            .pool_max_idle_per_host(1)
            // Keep the one connection however long criterion pauses between benchmarks.
            .pool_idle_timeout(None)
            .build(connector);
        Self { client, base }
    }

    /// `lifecycle-hooks.handle` as a webhook call.
    pub async fn hook(
        &self,
        ctx: &CallContext,
        request: &HookRequest,
    ) -> anyhow::Result<HookResponse> {
        let name = hook_name(request.hook);
        let body = wire::HookRequest {
            api_version: wire::HOOKS_API_VERSION.into(),
            kind: format!("{name}Request"),
            cluster: cluster(ctx),
            settings: settings(ctx),
            from_kubernetes_version: request.from_version.as_ref().map(version),
            to_kubernetes_version: version(&request.to_version),
        };
        let answer: wire::HookResponse = self.post(&wire::hook_path(name), &body).await?;
        match (answer.status, answer.retry_after_seconds) {
            (wire::Status::Failure, _) => bail!("hook failed: {}", answer.message),
            (wire::Status::Success, 0) => Ok(HookResponse::Proceed),
            (wire::Status::Success, seconds) => Ok(HookResponse::Hold(InProgress {
                reason: "HookHold".into(),
                message: answer.message,
                requeue_after_ms: seconds.saturating_mul(1000),
                conditions: Vec::new(),
            })),
        }
    }

    /// `control-plane.plan` as a webhook call; the plan as the webhook's typed JSON.
    pub async fn plan(&self, ctx: &CallContext, input: &PlanInput) -> anyhow::Result<wire::Plan> {
        let body = wire::PlanRequest {
            api_version: wire::PLAN_API_VERSION.into(),
            kind: wire::PLAN_REQUEST.into(),
            cluster: cluster(ctx),
            settings: settings(ctx),
            version: version(&input.version),
            replicas: input.replicas,
            members: input
                .members
                .iter()
                .map(|m| wire::Member {
                    machine: wire::MachineRef {
                        name: m.machine.name.clone(),
                        uid: m.machine.uid.clone(),
                    },
                    version: version(&m.version),
                    failure_domain: m.failure_domain.clone(),
                    ready: m.ready,
                    created_at: m.created_at,
                    deleting: m.deleting,
                })
                .collect(),
            failure_domains: input.failure_domains.clone(),
            endpoint: input.endpoint.as_ref().map(|e| wire::Endpoint {
                host: e.host.clone(),
                port: e.port,
            }),
        };
        let answer: wire::PlanResponse = self.post(wire::PLAN_PATH, &body).await?;
        match (answer.status, answer.plan) {
            (wire::Status::Success, Some(plan)) => Ok(plan),
            (wire::Status::Success, None) => bail!("plan answered without a plan"),
            (wire::Status::Failure, _) => bail!("plan failed: {}", answer.message),
        }
    }

    async fn post<A: DeserializeOwned>(
        &self,
        path: &str,
        body: &impl Serialize,
    ) -> anyhow::Result<A> {
        let request = http::Request::post(format!("{}{path}", self.base))
            .header(http::header::CONTENT_TYPE, "application/json")
            .body(Full::new(Bytes::from(serde_json::to_vec(body)?)))?;
        let response = self.client.request(request).await.context("request")?;
        ensure!(
            response.status().is_success(),
            "webhook answered {}",
            response.status()
        );
        let body = response.into_body().collect().await?.to_bytes();
        serde_json::from_slice(&body).context("answer")
    }
}

/// Runtime SDK's name of the hook.
fn hook_name(hook: Hook) -> &'static str {
    match hook {
        Hook::BeforeClusterCreate => "BeforeClusterCreate",
        Hook::AfterControlPlaneInitialized => "AfterControlPlaneInitialized",
        Hook::BeforeClusterUpgrade => "BeforeClusterUpgrade",
        Hook::AfterControlPlaneUpgrade => "AfterControlPlaneUpgrade",
        Hook::AfterClusterUpgrade => "AfterClusterUpgrade",
        Hook::BeforeClusterDelete => "BeforeClusterDelete",
    }
}

fn cluster(ctx: &CallContext) -> wire::Cluster {
    wire::Cluster {
        metadata: wire::ObjectMeta {
            namespace: ctx.cluster.namespace.clone(),
            name: ctx.cluster.name.clone(),
            uid: ctx.cluster.uid.clone(),
        },
    }
}

fn settings(ctx: &CallContext) -> wire::Settings {
    wire::Settings {
        config: ctx.config.clone(),
    }
}

fn version(v: &KubernetesVersion) -> String {
    wire::version(v.major, v.minor, v.patch)
}
