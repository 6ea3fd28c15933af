//! `capw plugin push` and `capw plugin pull`: components to and from OCI registries.

use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::sync::Arc;

use anyhow::Context;
use capw_oci::{
    ANNOTATION_CONTRACT_VERSION, ANNOTATION_EXTENSION_POINTS, ANNOTATION_PROVIDER_NAME,
    ANNOTATION_PROVIDER_VERSION, ArtifactDescription, ClientSettings, ComponentDescription,
    Credentials, Progress,
};
use capw_runtime::ContractInfo;
use indicatif::{ProgressBar, ProgressStyle};

use crate::cli::{GlobalArgs, PullArgs, PushArgs, RegistryArgs};

pub async fn push(global: &GlobalArgs, args: PushArgs) -> anyhow::Result<()> {
    // Load it first: only a component that is a provider is published, its own metadata
    // becomes the annotations and the interfaces the runtime read become the config's
    // component description.
    let (bytes, provider) = crate::inspect::load(global, &args.file).await?;
    let info = provider.info();
    let points: Vec<String> = info
        .extension_points()
        .iter()
        .map(ToString::to_string)
        .collect();
    let annotations = BTreeMap::from([
        (
            ANNOTATION_PROVIDER_NAME.to_owned(),
            info.metadata.name.clone(),
        ),
        (
            ANNOTATION_PROVIDER_VERSION.to_owned(),
            info.metadata.version.clone(),
        ),
        (
            ANNOTATION_CONTRACT_VERSION.to_owned(),
            info.contract.version.clone(),
        ),
        (ANNOTATION_EXTENSION_POINTS.to_owned(), points.join(",")),
        (
            "org.opencontainers.image.title".to_owned(),
            info.metadata.name.clone(),
        ),
        (
            "org.opencontainers.image.version".to_owned(),
            info.metadata.version.clone(),
        ),
    ]);
    let description = ArtifactDescription {
        annotations,
        component: Some(component_description(&info.contract)),
    };
    let (settings, credentials) = registry(&args.registry, &args.reference)?;
    let bar = bar(bytes.len() as u64, "pushing");
    let pushed = capw_oci::push(
        &settings,
        &args.reference,
        bytes.into(),
        description,
        &credentials,
        bar.as_ref().map(progress),
    )
    .await
    .with_context(|| format!("pushing {} to {}", args.file.display(), args.reference))?;
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    println!("pushed {}", args.reference);
    println!("digest: {}", pushed.digest);
    println!("pinned: {}", pushed.pinned_reference);
    Ok(())
}

pub async fn pull(args: PullArgs) -> anyhow::Result<()> {
    let (settings, credentials) = registry(&args.registry, &args.reference)?;
    let bar = bar(0, "pulling");
    let pulled = capw_oci::pull(
        &settings,
        &args.reference,
        &credentials,
        args.digest.as_deref(),
        bar.as_ref().map(progress),
    )
    .await
    .with_context(|| format!("pulling {}", args.reference))?;
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    std::fs::write(&args.output, &pulled.component)
        .with_context(|| format!("writing {}", args.output.display()))?;
    println!(
        "pulled {} ({} bytes) to {}",
        args.reference,
        pulled.component.len(),
        args.output.display()
    );
    println!("digest: {}", pulled.digest);
    for (key, value) in &pulled.annotations {
        println!("  {key}: {value}");
    }
    Ok(())
}

/// The config's `component` object: the interfaces the runtime found in the component, and
/// the contract world they match when there is one.
fn component_description(contract: &ContractInfo) -> ComponentDescription {
    ComponentDescription {
        exports: contract.export_names.clone(),
        imports: contract.import_names.clone(),
        target: contract.world(),
    }
}

fn registry(args: &RegistryArgs, reference: &str) -> anyhow::Result<(ClientSettings, Credentials)> {
    let mut settings = ClientSettings::default();
    if args.insecure {
        settings
            .insecure_registries
            .push(capw_oci::registry_of(reference)?);
    }
    let credentials = match (&args.token, &args.username, &args.password) {
        (Some(token), _, _) => Credentials::Bearer(token.clone()),
        (None, Some(username), Some(password)) => Credentials::Basic {
            username: username.clone(),
            password: password.clone(),
        },
        _ => Credentials::Anonymous,
    };
    Ok((settings, credentials))
}

/// A progress bar on stderr when it is a terminal; nothing otherwise.
fn bar(total: u64, verb: &'static str) -> Option<ProgressBar> {
    if !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = ProgressBar::new(total);
    let style = ProgressStyle::with_template(
        "{msg} [{bar:30}] {bytes}/{total_bytes} ({bytes_per_sec}, {eta})",
    )
    .map(|s| s.progress_chars("=> "))
    .unwrap_or_else(|_| ProgressStyle::default_bar());
    bar.set_style(style);
    bar.set_message(verb);
    Some(bar)
}

fn progress(bar: &ProgressBar) -> Progress {
    let bar = bar.clone();
    Arc::new(move |done, total| {
        if let Some(total) = total {
            bar.set_length(total);
        }
        bar.set_position(done);
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use capw_oci::WasmConfig;
    use capw_runtime::{Grants, Runtime, RuntimeConfig};

    #[tokio::test]
    async fn the_config_of_a_real_provider_names_its_contract_exports_and_wasi_imports() {
        let runtime = Runtime::new(RuntimeConfig::default()).unwrap();
        let bytes = capw_test_support::component("capw_sim_infra");
        let provider = runtime
            .load("sim-infra", bytes.into(), Grants::default())
            .await
            .unwrap();
        let config = WasmConfig::new(
            "sha256:00",
            Some(component_description(&provider.info().contract)),
        );
        let json = serde_json::to_value(&config).unwrap();
        let component = &json["component"];
        let names =
            |key: &str| -> Vec<String> { serde_json::from_value(component[key].clone()).unwrap() };
        assert!(
            names("exports").contains(&"capw:provider/infrastructure@0.3.0".to_owned()),
            "{component}"
        );
        let imports = names("imports");
        assert!(
            imports
                .iter()
                .any(|i| i.starts_with("wasi:io/streams@0.2.")),
            "{component}"
        );
        assert!(
            imports.contains(&"capw:provider/host-log@0.3.0".to_owned()),
            "{component}"
        );
        // The sim provider is built for the world of all four extension points.
        assert_eq!(component["target"], "capw:provider/provider@0.3.0");
    }
}
