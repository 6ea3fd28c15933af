//! `capw plugin test`: run the conformance suite on a component and report, for people (text
//! or JSON on stdout) and for CI (JUnit XML, the exit status).
//!
//! Its flags live here rather than in `cli.rs`: they belong to this command alone.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crate::sim::SimCloudHandle;
#[cfg(feature = "simcloud")]
use crate::sim::{SimCloud, SimCloudConfig, Timings};
use anyhow::{Context, bail};
use capw_conformance::SuiteOptions;
use capw_runtime::{Grants, HttpGrant, Runtime, RuntimeConfig, Secret};
use clap::Args;

use crate::cli::{GlobalArgs, OutputFormat, parse_duration};

/// What the config file may say to reach the in-process simcloud.
const SIMCLOUD_URL: &str = "${SIMCLOUD_URL}";

/// The token of the in-process simcloud: a test backend, not a secret of anyone's.
const SIMCLOUD_TOKEN: &str = "capw-conformance-simcloud";

#[derive(Debug, Args)]
pub struct TestArgs {
    /// The provider component (.wasm).
    pub file: PathBuf,
    /// The provider config every call carries (JSON or YAML); the provider must accept it.
    /// `${SIMCLOUD_URL}` in it becomes the base URL of the simcloud that --simcloud starts.
    /// Without it the suite uses `{}`.
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Start an in-process simcloud for the provider's calls: its authority is granted, and
    /// its token under the secret grant --simcloud-token-secret.
    #[arg(long)]
    pub simcloud: bool,
    /// The secret grant name that holds simcloud's token.
    #[arg(long, default_value = "simcloud-token")]
    pub simcloud_token_secret: String,
    /// Grant outbound HTTP to this authority, e.g. `https://api.example.com` (repeatable).
    #[arg(long = "http-grant", value_name = "AUTHORITY")]
    pub http_grants: Vec<String>,
    /// Grant a secret: `NAME=FILE`, its value read from FILE (repeatable).
    #[arg(long = "secret", value_name = "NAME=FILE")]
    pub secrets: Vec<String>,
    /// Deadline of each call (`10s`, `500ms`, `1m`).
    #[arg(long, default_value = "10s", value_parser = parse_duration)]
    pub call_timeout: Duration,
    /// How long one piece of in-progress work (a cluster, a machine, a deletion) may take.
    #[arg(long, default_value = "60s", value_parser = parse_duration)]
    pub patience: Duration,
    /// Also write the report as JUnit XML to this file.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// Format of the report on stdout.
    #[arg(short, long, value_enum, default_value_t = OutputFormat::Text)]
    pub output: OutputFormat,
}

pub async fn run(global: &GlobalArgs, args: TestArgs) -> anyhow::Result<()> {
    let bytes =
        std::fs::read(&args.file).with_context(|| format!("reading {}", args.file.display()))?;
    let sim = if args.simcloud {
        Some(start_simcloud().await?)
    } else {
        None
    };
    let config = read_config(&args, sim.as_ref())?;
    let grants = grants(&args, sim.as_ref())?;
    let runtime = Runtime::new(RuntimeConfig {
        cache_dir: global.cache_dir(),
        ..RuntimeConfig::default()
    })?;
    let mut options = SuiteOptions::new(config);
    options.patience = args.patience;
    let source = args.file.display().to_string();
    let report = capw_conformance::run(&runtime, &source, Arc::from(bytes), grants, &options).await;
    if let Some(sim) = sim {
        sim.shutdown().await.context("stopping simcloud")?;
    }

    match args.output {
        OutputFormat::Text => print!("{}", report.to_text()),
        OutputFormat::Json => println!("{}", serde_json::to_string_pretty(&report.to_json())?),
    }
    if let Some(path) = &args.junit {
        let xml = report.to_junit().context("writing the JUnit report")?;
        std::fs::write(path, xml).with_context(|| format!("writing {}", path.display()))?;
    }
    if !report.passed() {
        let s = report.summary();
        bail!(
            "{} of {} rules failed: {}",
            s.failed,
            report.results.len(),
            report.failed_rules().join(", ")
        );
    }
    Ok(())
}

#[cfg(not(feature = "simcloud"))]
async fn start_simcloud() -> anyhow::Result<SimCloudHandle> {
    Err(crate::sim::missing("capw plugin test --simcloud"))
}

#[cfg(feature = "simcloud")]
async fn start_simcloud() -> anyhow::Result<SimCloudHandle> {
    // Short delays: every intermediate state still exists, and the suite does not wait long.
    let config = SimCloudConfig::new(SIMCLOUD_TOKEN)
        .with_timings(Timings::uniform(Duration::from_millis(50)));
    SimCloud::start(config)
        .await
        .context("starting the in-process simcloud")
}

/// The config file as JSON, with `${SIMCLOUD_URL}` filled in.
fn read_config(args: &TestArgs, sim: Option<&SimCloudHandle>) -> anyhow::Result<serde_json::Value> {
    let Some(path) = &args.config else {
        return Ok(serde_json::json!({}));
    };
    let mut text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    if text.contains(SIMCLOUD_URL) {
        let Some(sim) = sim else {
            bail!(
                "{}: uses {SIMCLOUD_URL}; add --simcloud to start one",
                path.display()
            );
        };
        text = text.replace(SIMCLOUD_URL, &sim.base_url());
    }
    serde_yaml_ng::from_str(&text)
        .with_context(|| format!("{}: not a JSON or YAML document", path.display()))
}

fn grants(args: &TestArgs, sim: Option<&SimCloudHandle>) -> anyhow::Result<Grants> {
    let mut grants = Grants::default();
    grants.limits.call_timeout = args.call_timeout;
    for authority in &args.http_grants {
        grants.http.push(authority.parse::<HttpGrant>()?);
    }
    for grant in &args.secrets {
        let Some((name, file)) = grant.split_once('=') else {
            bail!("--secret {grant:?}: write it NAME=FILE");
        };
        let value =
            std::fs::read(file).with_context(|| format!("--secret {name}: reading {file}"))?;
        grants
            .secrets
            .insert(name.to_owned(), Some(Secret::new(value)));
    }
    if let Some(sim) = sim {
        grants
            .http
            .push(sim.addr().to_string().parse::<HttpGrant>()?);
        grants.secrets.insert(
            args.simcloud_token_secret.clone(),
            Some(Secret::new(SIMCLOUD_TOKEN)),
        );
    }
    Ok(grants)
}
