//! `capw plugin inspect`: load a component in the sandbox and show what it is.

use std::path::Path;
use std::sync::Arc;

use anyhow::Context;
use capw_runtime::{Grants, Provider, Runtime, RuntimeConfig};

use crate::cli::{GlobalArgs, InspectArgs, OutputFormat};

/// The component at `file` and its bytes, loaded in the sandbox with no grants.
pub async fn load(global: &GlobalArgs, file: &Path) -> anyhow::Result<(Vec<u8>, Provider)> {
    let bytes = std::fs::read(file).with_context(|| format!("reading {}", file.display()))?;
    let runtime = Runtime::new(RuntimeConfig {
        cache_dir: global.cache_dir(),
        ..RuntimeConfig::default()
    })?;
    let provider = runtime
        .load(
            &file.display().to_string(),
            Arc::from(bytes.as_slice()),
            Grants::default(),
        )
        .await
        .with_context(|| format!("{} is not a loadable provider component", file.display()))?;
    Ok((bytes, provider))
}

pub async fn run(global: &GlobalArgs, args: InspectArgs) -> anyhow::Result<()> {
    let (_, provider) = load(global, &args.file).await?;
    let info = provider.info();
    match args.output {
        OutputFormat::Json => {
            let m = &info.metadata;
            let points: Vec<String> = info
                .extension_points()
                .iter()
                .map(ToString::to_string)
                .collect();
            let view = serde_json::json!({
                "file": args.file,
                "name": m.name,
                "version": m.version,
                "description": m.description,
                "contract": info.contract.version,
                "extensionPoints": points,
                "exports": info.contract.export_names,
                "capabilities": {
                    "controlPlaneShape": m.capabilities.control_plane_shape.map(|s| format!("{s:?}").to_lowercase()),
                    "controlPlaneScalable": m.capabilities.control_plane_scalable,
                    "versionUpgrades": m.capabilities.version_upgrades,
                    "chainsUpgrades": m.capabilities.chains_upgrades,
                },
                "requestedGrants": {
                    "httpHosts": m.requested_grants.http_hosts,
                    "secrets": m.requested_grants.secrets,
                },
                "digest": format!("sha256:{}", info.digest),
                "size": info.size,
                "load": {
                    "cache": info.load.cache,
                    "compileMs": info.load.compile.as_secs_f64() * 1e3,
                    "totalMs": info.load.total.as_secs_f64() * 1e3,
                },
                "configSchema": info.config_schema,
            });
            println!("{}", serde_json::to_string_pretty(&view)?);
        }
        OutputFormat::Text => {
            let m = &info.metadata;
            println!("{}", args.file.display());
            println!("  provider:          {} {}", m.name, m.version);
            if !m.description.is_empty() {
                println!("  description:       {}", m.description);
            }
            println!(
                "  contract:          capw:provider@{}",
                info.contract.version
            );
            let points: Vec<String> = info
                .extension_points()
                .iter()
                .map(ToString::to_string)
                .collect();
            println!("  extension points:  {}", points.join(", "));
            if let Some(shape) = m.capabilities.control_plane_shape {
                println!(
                    "  control plane:     {shape:?} (scalable: {}, upgrades: {}, chains upgrades: {})",
                    m.capabilities.control_plane_scalable,
                    m.capabilities.version_upgrades,
                    m.capabilities.chains_upgrades
                );
            }
            println!(
                "  requests:          http hosts [{}], secrets [{}]",
                m.requested_grants.http_hosts.join(", "),
                m.requested_grants.secrets.join(", ")
            );
            println!("  digest:            sha256:{}", info.digest);
            println!("  size:              {} bytes", info.size);
            println!(
                "  load:              {:?} (compile {:.1?}, total {:.1?})",
                info.load.cache, info.load.compile, info.load.total
            );
            println!("  config schema:");
            for line in serde_json::to_string_pretty(&info.config_schema)?.lines() {
                println!("    {line}");
            }
        }
    }
    Ok(())
}
