//! The per-language figures of the provider guides: component size, first-load compile time,
//! cached load time and call latency of each example provider (C, Python, JavaScript, Go, and
//! the Rust example for comparison). Prints one Markdown table row per language.
//!
//! Each load time is the median of `LOADS` loads by a fresh runtime: "first load" with an empty
//! compile cache, "cached load" with the cache the first load filled. Call latency is the
//! median of `CALLS` calls of `bootstrap.generate`, each in a
//! fresh instance as the host always makes them.

use std::sync::Arc;
use std::time::{Duration, Instant};

use capw_runtime::bootstrap::{BootstrapRequest, SecretItem};
use capw_runtime::types::{
    CallContext, ClusterRef, Endpoint, KubernetesVersion, MachineRef, MachineRole,
};
use capw_runtime::{Grants, Runtime, RuntimeConfig};

const LOADS: usize = 5;
const CALLS: usize = 201;

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn ctx(config: &str) -> CallContext {
    CallContext {
        cluster: ClusterRef {
            namespace: "default".into(),
            name: "c1".into(),
            uid: "uid-1".into(),
        },
        config: config.into(),
        idempotency_key: "k".into(),
        deadline_ms: 10_000,
    }
}

fn request() -> BootstrapRequest {
    BootstrapRequest {
        machine: MachineRef {
            name: "m0".into(),
            uid: "u0".into(),
        },
        role: MachineRole::Init,
        version: KubernetesVersion {
            major: 1,
            minor: 35,
            patch: 0,
        },
        endpoint: Endpoint {
            host: "c1.example.test".into(),
            port: 6443,
        },
        secrets: vec![SecretItem {
            name: "bootstrap-token".into(),
            data: b"token:uid-1".to_vec(),
        }],
        control_plane_members: Vec::new(),
        join: None,
    }
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1e3)
}

fn us(d: Duration) -> String {
    format!("{:.0} µs", d.as_secs_f64() * 1e6)
}

async fn figures(lang: &str, file: &str, config: &str) -> anyhow::Result<()> {
    let bytes: Arc<[u8]> = Arc::from(capw_test_support::component(file));
    let (mut first, mut cached) = (Vec::new(), Vec::new());
    for _ in 0..LOADS {
        let dir = tempfile::tempdir()?;
        let config = || RuntimeConfig {
            cache_dir: Some(dir.path().to_path_buf()),
            ..Default::default()
        };
        let started = Instant::now();
        Runtime::new(config())?
            .load(lang, bytes.clone(), Grants::default())
            .await?;
        first.push(started.elapsed());
        let started = Instant::now();
        Runtime::new(config())?
            .load(lang, bytes.clone(), Grants::default())
            .await?;
        cached.push(started.elapsed());
    }
    let provider = Runtime::new(RuntimeConfig::default())?
        .load(lang, bytes.clone(), Grants::default())
        .await?;
    let (ctx, request) = (ctx(config), request());
    let mut calls = Vec::with_capacity(CALLS);
    for _ in 0..CALLS {
        let started = Instant::now();
        provider.generate_bootstrap(&ctx, &request).await?;
        calls.push(started.elapsed());
    }
    println!(
        "| {lang} | {:.1} MiB | {} | {} | {} |",
        bytes.len() as f64 / (1 << 20) as f64,
        ms(median(first)),
        ms(median(cached)),
        us(median(calls)),
    );
    Ok(())
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    println!("| Language | Component | First load (compile) | Cached load | Call (generate) |");
    println!("|---|---|---|---|---|");
    for lang in ["c", "go", "js", "python"] {
        let config = r#"{"timezone": "Europe/Berlin", "packages": ["curl", "jq"]}"#;
        figures(lang, &format!("capw_example_{lang}"), config).await?;
    }
    // The Rust example implements every extension point; its bootstrap.generate is the same
    // kind of string formatting.
    figures("rust", "capw_example_provider", r#"{"region": "eu-1"}"#).await?;
    Ok(())
}
