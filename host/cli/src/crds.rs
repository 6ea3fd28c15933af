//! `capw crds`: the CustomResourceDefinitions of every capw kind, as YAML on stdout
//! (what `deploy/crds.yaml` holds).

use std::io::Write;

/// Writes the CRDs to stdout.
pub fn run() -> anyhow::Result<()> {
    let yaml = capw_api::crds_yaml()?;
    std::io::stdout().lock().write_all(yaml.as_bytes())?;
    Ok(())
}
