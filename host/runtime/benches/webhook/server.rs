//! The example provider served natively as a webhook: an axum router whose handlers parse the
//! Runtime-SDK-style request, run the provider's code through the same SDK path as the native
//! benchmark (config parsed into its typed struct, context built) and answer in JSON. It runs
//! on a runtime of its own, on loopback, once over plain HTTP and once over HTTPS.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use anyhow::Context as _;
use axum::routing::post;
use axum::{Json, Router};
use capw_example_provider::{ExampleConfig, ExampleProvider};
use capw_sdk::lifecycle_hooks::{Hook, HookResponse};
use capw_sdk::types::{
    ClusterRef, ConditionStatus, ErrorCode, KubernetesVersion, MachineRef, ProviderError,
};
use capw_sdk::{Context, control_plane as cp};
use capw_sdk::{ControlPlane, LifecycleHooks};
use hyper_util::rt::TokioIo;
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;

use super::wire;

/// The time a call may take, as Runtime SDK's default `timeoutSeconds`.
const CALL_DEADLINE_MS: u32 = 10_000;

/// The running webhook: its two addresses and how many connections each accepted.
pub struct Server {
    pub http: SocketAddr,
    pub https: SocketAddr,
    http_connections: Arc<AtomicUsize>,
    https_connections: Arc<AtomicUsize>,
    /// Dropped last: ends the server's tasks.
    _runtime: tokio::runtime::Runtime,
}

impl Server {
    /// Binds two loopback ports and serves on a one-thread runtime of its own.
    pub fn start(tls: Arc<rustls::ServerConfig>) -> anyhow::Result<Self> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("webhook")
            .enable_all()
            .build()
            .context("webhook runtime")?;
        let bind = || runtime.block_on(TcpListener::bind("127.0.0.1:0"));
        let (http, https) = (bind()?, bind()?);
        let server = Self {
            http: http.local_addr()?,
            https: https.local_addr()?,
            http_connections: Arc::default(),
            https_connections: Arc::default(),
            _runtime: runtime,
        };
        let rt = &server._runtime;
        rt.spawn(serve(http, None, server.http_connections.clone()));
        let acceptor = TlsAcceptor::from(tls);
        rt.spawn(serve(
            https,
            Some(acceptor),
            server.https_connections.clone(),
        ));
        Ok(server)
    }

    /// Connections accepted so far: `(http, https)`.
    pub fn connections(&self) -> (usize, usize) {
        (
            self.http_connections.load(Ordering::Relaxed),
            self.https_connections.load(Ordering::Relaxed),
        )
    }
}

fn router() -> Router {
    Router::new()
        .route(
            &format!("/{}/{{hook}}/example", wire::HOOKS_API_VERSION),
            post(hook),
        )
        .route(wire::PLAN_PATH, post(plan))
}

/// Accepts connections until the runtime ends, each served by hyper's HTTP/1.1 with keep-alive.
async fn serve(listener: TcpListener, tls: Option<TlsAcceptor>, accepted: Arc<AtomicUsize>) {
    let router = router();
    while let Ok((tcp, _)) = listener.accept().await {
        accepted.fetch_add(1, Ordering::Relaxed);
        // As Go's net/http does: no Nagle delay on small answers.
        let _ = tcp.set_nodelay(true);
        let router = router.clone();
        let tls = tls.clone();
        tokio::spawn(async move {
            match tls {
                None => serve_connection(tcp, router).await,
                Some(acceptor) => {
                    if let Ok(stream) = acceptor.accept(tcp).await {
                        serve_connection(stream, router).await;
                    }
                }
            }
        });
    }
}

async fn serve_connection<S>(io: S, router: Router)
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let service = TowerToHyperService::new(router);
    let _ = hyper::server::conn::http1::Builder::new()
        .serve_connection(TokioIo::new(io), service)
        .await;
}

async fn hook(Json(mut request): Json<wire::HookRequest>) -> Json<wire::HookResponse> {
    let kind = std::mem::take(&mut request.kind);
    let name = kind.strip_suffix("Request").unwrap_or_default();
    let answer = handle(request, name);
    let (status, message, retry_after_seconds) = match answer {
        Ok(HookResponse::Proceed) => (wire::Status::Success, String::new(), 0),
        Ok(HookResponse::Hold(progress)) => (
            wire::Status::Success,
            progress.message,
            progress.requeue_after_ms.div_ceil(1000).max(1),
        ),
        Err(e) => (wire::Status::Failure, e.message, 0),
    };
    Json(wire::HookResponse {
        api_version: wire::HOOKS_API_VERSION.into(),
        kind: format!("{name}Response"),
        status,
        message,
        retry_after_seconds,
    })
}

fn handle(request: wire::HookRequest, name: &str) -> Result<HookResponse, ProviderError> {
    let hook = match name {
        "BeforeClusterCreate" => Hook::BeforeClusterCreate,
        "AfterControlPlaneInitialized" => Hook::AfterControlPlaneInitialized,
        "BeforeClusterUpgrade" => Hook::BeforeClusterUpgrade,
        "AfterControlPlaneUpgrade" => Hook::AfterControlPlaneUpgrade,
        "AfterClusterUpgrade" => Hook::AfterClusterUpgrade,
        "BeforeClusterDelete" => Hook::BeforeClusterDelete,
        _ => return Err(invalid(format!("unknown hook {name:?}"))),
    };
    let from_version = request
        .from_kubernetes_version
        .as_deref()
        .map(version)
        .transpose()?;
    let to_version = version(&request.to_kubernetes_version)?;
    let ctx = context(request.cluster, request.settings)?;
    let request = capw_sdk::lifecycle_hooks::HookRequest {
        hook,
        from_version,
        to_version,
    };
    <ExampleProvider as LifecycleHooks>::handle(&ctx, request)
}

async fn plan(Json(request): Json<wire::PlanRequest>) -> Json<wire::PlanResponse> {
    let (status, message, plan) = match run_plan(request) {
        Ok(plan) => (
            wire::Status::Success,
            String::new(),
            Some(plan_to_wire(plan)),
        ),
        Err(e) => (wire::Status::Failure, e.message, None),
    };
    Json(wire::PlanResponse {
        api_version: wire::PLAN_API_VERSION.into(),
        kind: wire::PLAN_RESPONSE.into(),
        status,
        message,
        retry_after_seconds: 0,
        plan,
    })
}

fn run_plan(request: wire::PlanRequest) -> Result<cp::Plan, ProviderError> {
    let members = request
        .members
        .into_iter()
        .map(|m| {
            Ok(cp::Member {
                machine: MachineRef {
                    name: m.machine.name,
                    uid: m.machine.uid,
                },
                version: version(&m.version)?,
                failure_domain: m.failure_domain,
                ready: m.ready,
                created_at: m.created_at,
                deleting: m.deleting,
                etcd: capw_sdk::control_plane::EtcdMembership::Unknown,
                out_of_date: Vec::new(),
                unhealthy: Vec::new(),
            })
        })
        .collect::<Result<_, ProviderError>>()?;
    let input = cp::PlanInput {
        version: version(&request.version)?,
        replicas: request.replicas,
        members,
        failure_domains: request.failure_domains,
        endpoint: request.endpoint.map(|e| capw_sdk::types::Endpoint {
            host: e.host,
            port: e.port,
        }),
        failures_tolerated: None,
        objects: Vec::new(),
    };
    let ctx = context(request.cluster, request.settings)?;
    <ExampleProvider as ControlPlane>::plan(&ctx, input)
}

fn plan_to_wire(plan: cp::Plan) -> wire::Plan {
    let step = match plan.step {
        cp::Step::None => wire::Step::None,
        cp::Step::CreateMachine(m) => wire::Step::CreateMachine {
            init: m.init,
            version: m.version.to_string(),
            failure_domain: m.failure_domain,
        },
        cp::Step::DeleteMachine(m) => wire::Step::DeleteMachine {
            machine: wire::MachineRef {
                name: m.name,
                uid: m.uid,
            },
        },
        cp::Step::RemoveEtcdMember(m) => wire::Step::RemoveEtcdMember {
            machine: wire::MachineRef {
                name: m.name,
                uid: m.uid,
            },
        },
        cp::Step::ApplyManifests(manifests) => wire::Step::ApplyManifests { manifests },
        cp::Step::Wait(p) => wire::Step::Wait {
            reason: p.reason,
            message: p.message,
            requeue_after_ms: p.requeue_after_ms,
        },
    };
    wire::Plan {
        step,
        initialized: plan.status.initialized,
        replicas: plan.replicas,
        ready_replicas: plan.ready_replicas,
        up_to_date_replicas: plan.up_to_date_replicas,
        endpoint: plan.status.endpoint.map(|e| wire::Endpoint {
            host: e.host,
            port: e.port,
        }),
        conditions: plan
            .status
            .conditions
            .into_iter()
            .map(|c| wire::Condition {
                type_: c.type_,
                status: match c.status {
                    ConditionStatus::True => "True",
                    ConditionStatus::False => "False",
                    ConditionStatus::Unknown => "Unknown",
                }
                .into(),
                reason: c.reason,
                message: c.message,
            })
            .collect(),
    }
}

/// The SDK's context for a webhook request: the config parsed as a component call parses it.
fn context(
    cluster: wire::Cluster,
    settings: wire::Settings,
) -> Result<Context<'static, ExampleConfig>, ProviderError> {
    let meta = cluster.metadata;
    let config = capw_sdk::config::parse(&settings.config)?;
    Ok(Context::new(
        ClusterRef {
            namespace: meta.namespace,
            name: meta.name,
            uid: meta.uid,
        },
        config,
        // Runtime SDK requests carry no idempotency key.
        "",
        Duration::from_millis(u64::from(CALL_DEADLINE_MS)),
    ))
}

fn version(text: &str) -> Result<KubernetesVersion, ProviderError> {
    let (major, minor, patch) =
        wire::parse_version(text).ok_or_else(|| invalid(format!("bad version {text:?}")))?;
    Ok(KubernetesVersion {
        major,
        minor,
        patch,
    })
}

fn invalid(message: String) -> ProviderError {
    ProviderError::permanent(ErrorCode::InvalidInput, message)
}
