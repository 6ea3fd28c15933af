//! Prometheus metrics of the controller and the HTTP endpoints that serve them and the health
//! probes.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::get;
use capw_runtime::CallObserver;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

/// Labels of a reconcile: how the pass ended.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct OutcomeLabels {
    /// `converged`, `progress`, `blocked`, `gone` or `error`.
    pub outcome: String,
}

/// Labels of provider loads.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ProviderLabels {
    /// The WasmProvider.
    pub provider: String,
    /// `loaded` or the reason it did not load.
    pub result: String,
}

/// Labels of provider calls: which provider, which contract function, how it ended.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct CallLabels {
    /// The WasmProvider.
    pub provider: String,
    /// The contract function, e.g. `infrastructure.reconcile-machine`.
    pub operation: String,
    /// `ok`, or the failure's kind: `DeadlineExceeded`, `MemoryLimitExceeded`, `Trap`,
    /// `ProviderError`, `CapabilityDenied`, ...
    pub result: String,
}

/// Labels of provider call durations.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct OperationLabels {
    /// The WasmProvider.
    pub provider: String,
    /// The contract function.
    pub operation: String,
}

/// The controller's metrics.
#[derive(Debug)]
pub struct Metrics {
    registry: Registry,
    /// Passes by outcome.
    pub reconciles: Family<OutcomeLabels, Counter>,
    /// Duration of passes, in seconds.
    pub reconcile_duration: Histogram,
    /// Passes that failed in the host (the API server), not in a provider.
    pub reconcile_errors: Counter,
    /// Provider loads by provider and result.
    pub provider_loads: Family<ProviderLabels, Counter>,
    /// 1 while this replica holds the leader Lease (or runs without leader election).
    pub leader: Gauge,
    /// Provider calls by provider, function and result.
    pub provider_calls: Family<CallLabels, Counter>,
    /// Duration of provider calls, in seconds, by provider and function.
    pub provider_call_duration: Family<OperationLabels, Histogram>,
}

impl Default for Metrics {
    fn default() -> Self {
        let mut registry = Registry::with_prefix("capw_controller");
        let reconciles = Family::<OutcomeLabels, Counter>::default();
        let reconcile_duration = Histogram::new(exponential_buckets(0.005, 2.0, 14));
        let reconcile_errors = Counter::default();
        let provider_loads = Family::<ProviderLabels, Counter>::default();
        let leader = Gauge::default();
        let provider_calls = Family::<CallLabels, Counter>::default();
        let provider_call_duration =
            Family::<OperationLabels, Histogram>::new_with_constructor(call_buckets as fn() -> _);
        registry.register(
            "reconciles",
            "Reconcile passes by outcome",
            reconciles.clone(),
        );
        registry.register(
            "reconcile_duration_seconds",
            "Duration of reconcile passes",
            reconcile_duration.clone(),
        );
        registry.register(
            "reconcile_errors",
            "Reconcile passes that failed in the host",
            reconcile_errors.clone(),
        );
        registry.register(
            "provider_loads",
            "WasmProvider loads by provider and result",
            provider_loads.clone(),
        );
        registry.register("leader", "1 while this replica reconciles", leader.clone());
        registry.register(
            "provider_calls",
            "Provider calls by provider, contract function and result",
            provider_calls.clone(),
        );
        registry.register(
            "provider_call_duration_seconds",
            "Duration of provider calls by provider and contract function",
            provider_call_duration.clone(),
        );
        Metrics {
            registry,
            reconciles,
            reconcile_duration,
            reconcile_errors,
            provider_loads,
            leader,
            provider_calls,
            provider_call_duration,
        }
    }
}

/// Buckets of provider call durations: 50 µs to about 13 s.
fn call_buckets() -> Histogram {
    Histogram::new(exponential_buckets(0.000_05, 4.0, 10))
}

/// Two observers of provider calls, each told of every call.
#[derive(Debug)]
pub(crate) struct Both(pub Arc<Metrics>, pub Arc<dyn CallObserver>);

impl CallObserver for Both {
    fn call_finished(
        &self,
        provider: &str,
        operation: &'static str,
        elapsed: Duration,
        outcome: Result<(), &'static str>,
    ) {
        self.0.call_finished(provider, operation, elapsed, outcome);
        self.1.call_finished(provider, operation, elapsed, outcome);
    }
}

impl CallObserver for Metrics {
    fn call_finished(
        &self,
        provider: &str,
        operation: &'static str,
        elapsed: Duration,
        outcome: Result<(), &'static str>,
    ) {
        self.provider_calls
            .get_or_create(&CallLabels {
                provider: provider.into(),
                operation: operation.into(),
                result: outcome.err().unwrap_or("ok").into(),
            })
            .inc();
        self.provider_call_duration
            .get_or_create(&OperationLabels {
                provider: provider.into(),
                operation: operation.into(),
            })
            .observe(elapsed.as_secs_f64());
    }
}

impl Metrics {
    /// Counts one pass that ended with `outcome` after `took`.
    pub fn pass(&self, outcome: &str, took: Duration) {
        self.reconciles
            .get_or_create(&OutcomeLabels {
                outcome: outcome.into(),
            })
            .inc();
        self.reconcile_duration.observe(took.as_secs_f64());
    }

    /// The metrics in the Prometheus text format.
    pub fn encode(&self) -> String {
        let mut out = String::new();
        // Writing into a String cannot fail.
        let _ = encode(&mut out, &self.registry);
        out
    }
}

/// Whether the controller is ready: providers loaded and, with leader election, either
/// leading or standing by.
#[derive(Debug, Default)]
pub struct Readiness(AtomicBool);

impl Readiness {
    /// Marks the controller ready.
    pub fn set_ready(&self) {
        self.0.store(true, Ordering::SeqCst);
    }

    /// Whether it is ready.
    pub fn is_ready(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }
}

/// Serves `/metrics` on `metrics` and `/healthz` and `/readyz` on `health` (one server when
/// they are the same address) until `shutdown` resolves.
///
/// # Errors
///
/// When an address cannot be bound.
pub async fn serve(
    metrics_addr: SocketAddr,
    health_addr: SocketAddr,
    metrics: Arc<Metrics>,
    readiness: Arc<Readiness>,
    shutdown: impl Future<Output = ()> + Send + Clone + 'static,
) -> std::io::Result<Vec<tokio::task::JoinHandle<()>>> {
    let metrics_router = Router::new()
        .route("/metrics", get(metrics_handler))
        .with_state(metrics);
    let health_router = Router::new()
        .route("/healthz", get(|| async { "ok" }))
        .route("/readyz", get(ready_handler))
        .with_state(readiness);
    let mut routers = vec![(metrics_addr, metrics_router)];
    if health_addr == metrics_addr {
        routers[0].1 = routers[0].1.clone().merge(health_router);
    } else {
        routers.push((health_addr, health_router));
    }
    let mut tasks = Vec::new();
    for (addr, router) in routers {
        let listener = tokio::net::TcpListener::bind(addr).await?;
        tracing::info!(address = %listener.local_addr()?, "serving");
        let shutdown = shutdown.clone();
        tasks.push(tokio::spawn(async move {
            if let Err(e) = axum::serve(listener, router)
                .with_graceful_shutdown(shutdown)
                .await
            {
                tracing::warn!(error = %e, "endpoint server stopped");
            }
        }));
    }
    Ok(tasks)
}

async fn metrics_handler(State(metrics): State<Arc<Metrics>>) -> impl IntoResponse {
    (
        [(
            header::CONTENT_TYPE,
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        )],
        metrics.encode(),
    )
}

async fn ready_handler(State(readiness): State<Arc<Readiness>>) -> impl IntoResponse {
    if readiness.is_ready() {
        (StatusCode::OK, "ok")
    } else {
        (StatusCode::SERVICE_UNAVAILABLE, "not ready")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn provider_calls_are_counted_by_provider_operation_and_result() {
        let metrics = Metrics::default();
        let op = "infrastructure.reconcile-machine";
        metrics.call_finished("infra", op, Duration::from_millis(2), Ok(()));
        metrics.call_finished("infra", op, Duration::from_millis(3), Ok(()));
        metrics.call_finished("infra", op, Duration::from_secs(1), Err("DeadlineExceeded"));
        let text = metrics.encode();
        assert!(
            text.contains(&format!(
                "capw_controller_provider_calls_total{{provider=\"infra\",operation=\"{op}\",result=\"ok\"}} 2"
            )),
            "{text}"
        );
        assert!(
            text.contains(&format!(
                "capw_controller_provider_calls_total{{provider=\"infra\",operation=\"{op}\",result=\"DeadlineExceeded\"}} 1"
            )),
            "{text}"
        );
        assert!(
            text.contains(&format!(
                "capw_controller_provider_call_duration_seconds_count{{provider=\"infra\",operation=\"{op}\"}} 3"
            )),
            "{text}"
        );
    }
}
