//! What a provider call costs, for two calls of the example provider:
//! - `lifecycle-hooks.handle`: next to no work (parse a two-field config, answer `proceed`),
//!   so it measures the cost of the call itself;
//! - `control-plane.plan`: a pure function over a list of records, typical of the contract.
//!
//! Each is called
//! - in a fresh instance per call, as the host does (pooling allocator, copy-on-write memory),
//! - in one instance reused for every call,
//! - as the same Rust code compiled natively, through the same SDK path (config JSON parsed,
//!   typed context built, answer built),
//! - as that native code behind a Runtime-SDK-style webhook (axum, in this process, on its own
//!   runtime, on loopback; see [`webhook`]), called with one kept-alive connection over plain
//!   HTTP and over HTTPS: what a provider call costs in a webhook-based design, measured in the
//!   same run as the component calls.
//!
//! A third group, `contract.hook`, compares the two contract versions on the same work: the
//! twin hook providers `tests/plugins/hooks-v0_1` and `hooks-v0_2` (parse the same two-field
//! config, answer `proceed`), each in a fresh instance per call and in one reused instance.
//!
//! `make bench` runs it and prints the medians; docs/performance.md records them.
//!
//! With `CAPW_BENCH_LOG` set (e.g. `info`), the calls run under a log subscriber like the one
//! `capw` installs, filtered by that directive and writing nowhere: what logging costs a call.

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use capw_runtime::control_plane::{Member, PlanInput};
use capw_runtime::lifecycle_hooks::{Hook, HookRequest, HookResponse};
use capw_runtime::types::{CallContext, ClusterRef, Endpoint, KubernetesVersion, MachineRef};
use capw_runtime::{Grants, Runtime, RuntimeConfig};
use criterion::{Criterion, criterion_group, criterion_main};

mod webhook;

const CONFIG: &str = r#"{"region":"eu-1","zones":["a","b","c"]}"#;

fn version() -> KubernetesVersion {
    KubernetesVersion {
        major: 1,
        minor: 35,
        patch: 0,
    }
}

fn host_input() -> (CallContext, PlanInput) {
    let ctx = CallContext {
        cluster: ClusterRef {
            namespace: "default".into(),
            name: "bench".into(),
            uid: "uid-bench".into(),
        },
        config: CONFIG.into(),
        idempotency_key: "bench-key".into(),
        deadline_ms: 10_000,
    };
    let members = (0..3)
        .map(|i| Member {
            machine: MachineRef {
                name: format!("cp-{i}"),
                uid: format!("uid-cp-{i}"),
            },
            version: version(),
            failure_domain: Some(["a", "b", "c"][i].into()),
            ready: true,
            created_at: 1_700_000_000 + i as u64,
            deleting: false,
            etcd: capw_runtime::control_plane::EtcdMembership::Unknown,
            out_of_date: Vec::new(),
            unhealthy: Vec::new(),
        })
        .collect();
    let input = PlanInput {
        version: version(),
        replicas: 3,
        members,
        failure_domains: vec!["a".into(), "b".into(), "c".into()],
        endpoint: Some(Endpoint {
            host: "bench.eu-1.example.test".into(),
            port: 6443,
        }),
        failures_tolerated: None,
        objects: Vec::new(),
    };
    (ctx, input)
}

/// The call context as the native run serves it to the SDK: what the host lends a 0.2 call.
#[derive(Clone)]
struct NativeCall(CallContext);

impl capw_sdk::CallSource for NativeCall {
    fn cluster(&self) -> capw_sdk::types::ClusterRef {
        capw_sdk::types::ClusterRef {
            namespace: self.0.cluster.namespace.clone(),
            name: self.0.cluster.name.clone(),
            uid: self.0.cluster.uid.clone(),
        }
    }

    fn config(&self) -> String {
        self.0.config.clone()
    }

    fn idempotency_key(&self) -> String {
        self.0.idempotency_key.clone()
    }

    fn remaining_ms(&self) -> u32 {
        self.0.deadline_ms
    }
}

/// The same input in the SDK's types, for the native run.
fn native_input(
    ctx: &CallContext,
    input: &PlanInput,
) -> (NativeCall, capw_sdk::control_plane::PlanInput) {
    let ctx = NativeCall(ctx.clone());
    let v = |v: &KubernetesVersion| capw_sdk::types::KubernetesVersion {
        major: v.major,
        minor: v.minor,
        patch: v.patch,
    };
    let input = capw_sdk::control_plane::PlanInput {
        version: v(&input.version),
        replicas: input.replicas,
        members: input
            .members
            .iter()
            .map(|m| capw_sdk::control_plane::Member {
                machine: capw_sdk::types::MachineRef {
                    name: m.machine.name.clone(),
                    uid: m.machine.uid.clone(),
                },
                version: v(&m.version),
                failure_domain: m.failure_domain.clone(),
                ready: m.ready,
                created_at: m.created_at,
                deleting: m.deleting,
                etcd: capw_sdk::control_plane::EtcdMembership::Unknown,
                out_of_date: Vec::new(),
                unhealthy: Vec::new(),
            })
            .collect(),
        failure_domains: input.failure_domains.clone(),
        endpoint: input.endpoint.as_ref().map(|e| capw_sdk::types::Endpoint {
            host: e.host.clone(),
            port: e.port,
        }),
        failures_tolerated: None,
        objects: Vec::new(),
    };
    (ctx, input)
}

fn component(name: &str) -> Arc<[u8]> {
    Arc::from(capw_test_support::component(name))
}

fn example_component() -> Arc<[u8]> {
    Arc::from(capw_test_support::component("capw_example_provider"))
}

/// Time `iters` sequential calls inside one `block_on`, so the executor's entry cost is not
/// counted per call.
fn timed<F: Future>(
    rt: &tokio::runtime::Runtime,
    iters: u64,
    mut call: impl FnMut() -> F,
) -> Duration {
    rt.block_on(async {
        let start = Instant::now();
        for _ in 0..iters {
            black_box(call().await);
        }
        start.elapsed()
    })
}

/// One benchmark group: `$call` (a method call on a `Provider` or a `Session`, named `p`) in a
/// fresh instance per call and in one reused instance, `$native` (the same logic compiled
/// natively), and `$webhook` (a call on a `WebhookClient`, named `w`) over HTTP and HTTPS. A
/// macro, because `Provider` and `Session` share their method names but no trait.
macro_rules! compare {
    ($c:ident, $rt:ident, $provider:ident, $webhooks:ident, $name:literal, |$p:ident| $call:expr,
     $native:expr, |$w:ident| $webhook:expr) => {{
        let mut group = $c.benchmark_group($name);
        group.measurement_time(Duration::from_secs(5));
        group.bench_function("fresh-instance", |b| {
            b.iter_custom(|iters| {
                timed(&$rt, iters, || async {
                    let $p = &$provider;
                    $call.await.unwrap()
                })
            })
        });
        let mut session = $rt.block_on($provider.session()).unwrap();
        group.bench_function("reused-instance", |b| {
            b.iter_custom(|iters| {
                $rt.block_on(async {
                    let start = Instant::now();
                    for _ in 0..iters {
                        let $p = &mut session;
                        black_box($call.await.unwrap());
                    }
                    start.elapsed()
                })
            })
        });
        drop(session);
        group.bench_function("native", |b| b.iter(|| black_box($native.unwrap())));
        for (variant, client) in $webhooks.variants() {
            group.bench_function(variant, |b| {
                b.iter_custom(|iters| {
                    timed(&$rt, iters, || async {
                        let $w = client;
                        $webhook.await.unwrap()
                    })
                })
            });
        }
        group.finish();
    }};
}

fn calls(c: &mut Criterion) {
    if let Ok(filter) = std::env::var("CAPW_BENCH_LOG") {
        // Process-wide, as `capw` does: a scoped subscriber would make tracing ask it about
        // every disabled callsite on every call instead of caching the answer.
        tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::new(filter))
            .with_writer(std::io::sink)
            .init();
    }
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let runtime = Runtime::new(RuntimeConfig::default()).unwrap();
    let provider = rt
        .block_on(runtime.load("example", example_component(), Grants::default()))
        .unwrap();
    let (ctx, input) = host_input();
    let (native_ctx, native_plan_input) = native_input(&ctx, &input);
    let hook = HookRequest {
        hook: Hook::BeforeClusterUpgrade,
        from_version: Some(version()),
        to_version: version(),
    };
    let native_hook = capw_sdk::lifecycle_hooks::HookRequest {
        hook: capw_sdk::lifecycle_hooks::Hook::BeforeClusterUpgrade,
        from_version: Some(native_ctx_version()),
        to_version: native_ctx_version(),
    };
    let webhooks = webhook::Webhooks::start().unwrap();
    // The variants must agree before they are compared.
    assert_eq!(
        rt.block_on(provider.plan(&ctx, &input)).unwrap().replicas,
        3
    );
    assert_eq!(
        rt.block_on(provider.call_hook(&ctx, &hook)).unwrap(),
        HookResponse::Proceed
    );
    for (variant, client) in webhooks.variants() {
        let plan = rt.block_on(client.plan(&ctx, &input)).unwrap();
        assert_eq!(plan.replicas, 3, "{variant}");
        assert!(matches!(plan.step, webhook::wire::Step::None), "{variant}");
        assert_eq!(
            rt.block_on(client.hook(&ctx, &hook)).unwrap(),
            HookResponse::Proceed,
            "{variant}"
        );
    }

    // As the SDK enters a call: the config parsed, the other fields read when asked for.
    let example_ctx = || {
        capw_sdk::__enter::<capw_example_provider::ExampleConfig>(
            true,
            "lifecycle-hooks.handle",
            black_box(&native_ctx),
        )
        .unwrap()
    };
    compare!(
        c,
        rt,
        provider,
        webhooks,
        "example.hook",
        |p| p.call_hook(&ctx, &hook),
        <capw_example_provider::ExampleProvider as capw_sdk::LifecycleHooks>::handle(
            &example_ctx(),
            black_box(native_hook)
        ),
        |w| w.hook(&ctx, &hook)
    );
    compare!(
        c,
        rt,
        provider,
        webhooks,
        "example.plan",
        |p| p.plan(&ctx, &input),
        <capw_example_provider::ExampleProvider as capw_sdk::ControlPlane>::plan(
            &example_ctx(),
            black_box(native_plan_input.clone())
        ),
        |w| w.plan(&ctx, &input)
    );
    // Keep-alive held: every webhook call of the run went over the one connection per port.
    assert_eq!(webhooks.connections(), (1, 1), "connections (http, https)");
    drop(webhooks);

    contract_versions(c, &rt, &runtime, &ctx, &hook);
}

/// `handle` at each contract version, on the same work: the twin hook providers.
fn contract_versions(
    c: &mut Criterion,
    rt: &tokio::runtime::Runtime,
    runtime: &Arc<Runtime>,
    ctx: &CallContext,
    hook: &HookRequest,
) {
    let mut group = c.benchmark_group("contract.hook");
    group.measurement_time(Duration::from_secs(5));
    for (version, file) in [
        ("v0.1", "capw_hooks_v0_1_provider"),
        ("v0.2", "capw_hooks_v0_2_provider"),
    ] {
        let provider = rt
            .block_on(runtime.load(version, component(file), Grants::default()))
            .unwrap();
        assert_eq!(
            rt.block_on(provider.call_hook(ctx, hook)).unwrap(),
            HookResponse::Proceed
        );
        group.bench_function(format!("{version}-fresh-instance"), |b| {
            b.iter_custom(|iters| timed(rt, iters, || provider.call_hook(ctx, hook)))
        });
        let mut session = rt.block_on(provider.session()).unwrap();
        group.bench_function(format!("{version}-reused-instance"), |b| {
            b.iter_custom(|iters| {
                rt.block_on(async {
                    let start = Instant::now();
                    for _ in 0..iters {
                        black_box(session.call_hook(ctx, hook).await.unwrap());
                    }
                    start.elapsed()
                })
            })
        });
    }
    group.finish();
}

fn native_ctx_version() -> capw_sdk::types::KubernetesVersion {
    capw_sdk::types::KubernetesVersion {
        major: 1,
        minor: 35,
        patch: 0,
    }
}

criterion_group!(benches, calls);
criterion_main!(benches);
