//! `capw bench languages`: the same provider logic built in several languages, side by side in
//! one run: component size, cold compile, load from the compile cache, and the latency and CPU
//! of a call in a fresh instance (as the host calls) and in one reused instance.
//!
//! The components are bootstrap providers doing the same work (the bootstrap starters of
//! `capw plugin new`, which `scripts/bench-languages.sh` builds): each is asked for the same
//! `bootstrap.generate`, and every answer must be the same bytes as the first component's,
//! so that the figures compare languages, not logic.

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use capw_runtime::bootstrap::{BootstrapRequest, ControlPlaneMember, SecretItem};
use capw_runtime::types::{
    CallContext, ClusterRef, Endpoint, KubernetesVersion, MachineRef, MachineRole,
};
use capw_runtime::{Grants, Provider, Runtime, RuntimeConfig};

use crate::bench_kube::percentile;
use crate::cli::{BenchLanguagesArgs, BenchSubject as Subject};

/// The config every component is called with.
const CONFIG: &str = r#"{"timezone":"Europe/Berlin","packages":["curl","jq","nftables"]}"#;

/// Wall time and the process's CPU time of some work.
#[derive(Debug, Clone, Copy)]
struct Cost {
    wall: Duration,
    cpu: Option<Duration>,
}

/// The CPU time the whole process has used, to the nanosecond (`/proc`'s figures count in
/// 10 ms ticks, too coarse for a call).
fn process_cpu() -> Option<Duration> {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ProcessCPUTime);
    Some(Duration::new(
        u64::try_from(t.tv_sec).ok()?,
        u32::try_from(t.tv_nsec).ok()?,
    ))
}

/// Runs `work`, measuring its wall and CPU time (the whole process's: compiles run on worker
/// threads).
async fn measured<T>(work: impl Future<Output = T>) -> (T, Cost) {
    let (cpu, started) = (process_cpu(), Instant::now());
    let out = work.await;
    let wall = started.elapsed();
    let cpu = process_cpu()
        .zip(cpu)
        .map(|(now, then)| now.saturating_sub(then));
    (out, Cost { wall, cpu })
}

/// The median of `costs`, wall and CPU apart.
fn median(costs: &[Cost]) -> Cost {
    let mut walls: Vec<Duration> = costs.iter().map(|c| c.wall).collect();
    walls.sort();
    let mut cpus: Vec<Duration> = costs.iter().filter_map(|c| c.cpu).collect();
    cpus.sort();
    Cost {
        wall: percentile(&walls, 50.0).unwrap_or_default(),
        cpu: percentile(&cpus, 50.0),
    }
}

/// The per-call figures of a run of calls.
#[derive(Debug, Clone, Copy)]
struct Calls {
    median: Duration,
    p90: Duration,
    /// The process's CPU time over the run, per call.
    cpu_per_call: Option<Duration>,
}

impl Calls {
    fn from(mut each: Vec<Duration>, total: Cost) -> Calls {
        each.sort();
        let n = u32::try_from(each.len().max(1)).unwrap_or(u32::MAX);
        Calls {
            median: percentile(&each, 50.0).unwrap_or_default(),
            p90: percentile(&each, 90.0).unwrap_or_default(),
            cpu_per_call: total.cpu.map(|c| c / n),
        }
    }
}

/// What one component measured.
#[derive(Debug)]
struct Row {
    label: String,
    bytes: u64,
    cold: Cost,
    cached: Cost,
    fresh: Calls,
    reused: Calls,
}

fn context() -> CallContext {
    CallContext {
        cluster: ClusterRef {
            namespace: "default".into(),
            name: "bench".into(),
            uid: "uid-bench".into(),
        },
        config: CONFIG.into(),
        idempotency_key: "bench-key".into(),
        deadline_ms: 10_000,
    }
}

fn request() -> BootstrapRequest {
    BootstrapRequest {
        machine: MachineRef {
            name: "bench-cp-1".into(),
            uid: "uid-bench-cp-1".into(),
        },
        role: MachineRole::JoinControlPlane,
        version: KubernetesVersion {
            major: 1,
            minor: 35,
            patch: 0,
        },
        endpoint: Endpoint {
            host: "bench.example.test".into(),
            port: 6443,
        },
        secrets: vec![SecretItem {
            name: "bootstrap-token".into(),
            data: b"token:uid-bench".to_vec(),
        }],
        control_plane_members: (0..3)
            .map(|i| ControlPlaneMember {
                name: format!("bench-cp-{i}"),
                address: format!("10.0.0.{}", i + 10),
            })
            .collect(),
        join: None,
    }
}

fn runtime(cache: &std::path::Path) -> anyhow::Result<Arc<Runtime>> {
    Ok(Runtime::new(RuntimeConfig {
        cache_dir: Some(cache.to_owned()),
        ..RuntimeConfig::default()
    })?)
}

async fn load(
    runtime: &Arc<Runtime>,
    subject: &Subject,
    bytes: &Arc<[u8]>,
) -> anyhow::Result<Provider> {
    runtime
        .load(&subject.label, bytes.clone(), Grants::default())
        .await
        .with_context(|| format!("loading {}", subject.path.display()))
}

/// Measures one component; `expected` is the first component's answer, which every other
/// must repeat.
async fn measure(
    subject: &Subject,
    args: &BenchLanguagesArgs,
    expected: &mut Option<Vec<u8>>,
) -> anyhow::Result<Row> {
    let bytes: Arc<[u8]> = std::fs::read(&subject.path)
        .with_context(|| format!("reading {}", subject.path.display()))?
        .into();
    let work = tempfile::tempdir()?;

    // Cold: a new runtime over an empty compile cache each time.
    let mut cold = Vec::new();
    for i in 0..args.loads {
        let rt = runtime(&work.path().join(format!("cold-{i}")))?;
        let (provider, cost) = measured(load(&rt, subject, &bytes)).await;
        provider?;
        cold.push(cost);
    }
    // Cached: a new runtime over the warm cache each time, as a restarted host.
    let warm = work.path().join("warm");
    load(&runtime(&warm)?, subject, &bytes).await?;
    let mut cached = Vec::new();
    for _ in 0..args.loads {
        let rt = runtime(&warm)?;
        let (provider, cost) = measured(load(&rt, subject, &bytes)).await;
        provider?;
        cached.push(cost);
    }

    let rt = runtime(&warm)?;
    let provider = load(&rt, subject, &bytes).await?;
    let (ctx, request) = (context(), request());
    let answer = provider
        .generate_bootstrap(&ctx, &request)
        .await
        .with_context(|| format!("{}: bootstrap.generate", subject.label))?;
    match expected {
        None => *expected = Some(answer.data.clone()),
        Some(first) if *first != answer.data => bail!(
            "{}: its answer differs from the first component's, so the figures would compare \
             different work:\n--- first\n{}\n--- {}\n{}",
            subject.label,
            String::from_utf8_lossy(first),
            subject.label,
            String::from_utf8_lossy(&answer.data)
        ),
        Some(_) => {}
    }

    let mut each = Vec::with_capacity(args.calls);
    let (result, total) = measured(async {
        for _ in 0..args.calls {
            let started = Instant::now();
            provider.generate_bootstrap(&ctx, &request).await?;
            each.push(started.elapsed());
        }
        anyhow::Ok(())
    })
    .await;
    result?;
    let fresh = Calls::from(each, total);

    let mut session = provider.session().await?;
    let mut each = Vec::with_capacity(args.calls);
    let (result, total) = measured(async {
        for _ in 0..args.calls {
            let started = Instant::now();
            session.generate_bootstrap(&ctx, &request).await?;
            each.push(started.elapsed());
        }
        anyhow::Ok(())
    })
    .await;
    result?;
    let reused = Calls::from(each, total);

    Ok(Row {
        label: subject.label.clone(),
        bytes: bytes.len() as u64,
        cold: median(&cold),
        cached: median(&cached),
        fresh,
        reused,
    })
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

fn us(d: Duration) -> String {
    format!("{} µs", d.as_micros())
}

fn cost(c: Cost) -> String {
    format!("{} / {}", ms(c.wall), c.cpu.map_or_else(|| "-".into(), ms))
}

fn calls(c: Calls) -> String {
    format!(
        "{} / {} / {}",
        us(c.median),
        us(c.p90),
        c.cpu_per_call.map_or_else(|| "-".into(), us)
    )
}

pub async fn run(args: BenchLanguagesArgs) -> anyhow::Result<()> {
    if args.components.is_empty() {
        bail!("no component: give one --component LABEL=PATH or more");
    }
    let mut expected = None;
    let mut rows = Vec::new();
    for subject in &args.components {
        eprintln!("measuring {} ({})", subject.label, subject.path.display());
        rows.push(measure(subject, &args, &mut expected).await?);
    }
    println!(
        "{} loads, {} calls each; medians; CPU is the process's (user + system)\n",
        args.loads, args.calls
    );
    println!(
        "| Component | Size | Cold compile (wall / CPU) | Cached load (wall / CPU) | Call, fresh instance (median / p90 / CPU per call) | Call, reused instance (median / p90 / CPU per call) |"
    );
    println!("|---|---|---|---|---|---|");
    for r in &rows {
        println!(
            "| {} | {:.2} MB | {} | {} | {} | {} |",
            r.label,
            r.bytes as f64 / 1e6,
            cost(r.cold),
            cost(r.cached),
            calls(r.fresh),
            calls(r.reused)
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians_take_wall_and_cpu_apart() {
        let c = |w, cpu| Cost {
            wall: Duration::from_millis(w),
            cpu: Some(Duration::from_millis(cpu)),
        };
        let m = median(&[c(30, 1), c(10, 3), c(20, 2)]);
        assert_eq!(m.wall, Duration::from_millis(20));
        assert_eq!(m.cpu, Some(Duration::from_millis(2)));
    }
}
