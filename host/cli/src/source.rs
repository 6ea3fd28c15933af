//! Where `capw get` and `capw describe` read objects: the local mode's store, or the API
//! server of a management cluster running the Kubernetes mode (`--kubeconfig`, `--context`).
//! Both answer through [`ObjectStore`], so the tables and trees are the same.

use std::path::PathBuf;

use anyhow::Context as _;
use capw_engine::store::ObjectStore;
use clap::Args;
use kube::config::{KubeConfigOptions, Kubeconfig};

use crate::cli::GlobalArgs;

/// A management cluster to read from instead of the local state.
#[derive(Debug, Clone, Default, Args)]
pub struct ClusterSource {
    /// Read from this kubeconfig's cluster (the Kubernetes mode) instead of the local state.
    #[arg(long)]
    pub kubeconfig: Option<PathBuf>,
    /// Read from this context's cluster, of --kubeconfig or else of $KUBECONFIG or
    /// ~/.kube/config.
    #[arg(long)]
    pub context: Option<String>,
}

impl ClusterSource {
    /// Whether a cluster was named: otherwise the local state is read.
    pub fn is_set(&self) -> bool {
        self.kubeconfig.is_some() || self.context.is_some()
    }
}

/// The objects to read: the cluster `cluster` names, or the local state.
pub async fn open(
    global: &GlobalArgs,
    cluster: &ClusterSource,
) -> anyhow::Result<Box<dyn ObjectStore>> {
    if !cluster.is_set() {
        return Ok(Box::new(crate::state::open_store(global)?));
    }
    let (kubeconfig, from) = match &cluster.kubeconfig {
        Some(path) => (
            Kubeconfig::read_from(path)
                .with_context(|| format!("reading kubeconfig {}", path.display()))?,
            path.display().to_string(),
        ),
        None => (
            Kubeconfig::read().context("reading $KUBECONFIG or ~/.kube/config")?,
            "$KUBECONFIG or ~/.kube/config".to_owned(),
        ),
    };
    let options = KubeConfigOptions {
        context: cluster.context.clone(),
        ..KubeConfigOptions::default()
    };
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &options)
        .await
        .with_context(|| match &cluster.context {
            Some(context) => format!("using context {context:?} of {from}"),
            None => format!("using the current context of {from}"),
        })?;
    let client = kube::Client::try_from(config).context("building the Kubernetes client")?;
    Ok(Box::new(capw_kube::KubeStore::new(client)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_context_the_kubeconfig_lacks_is_named() {
        // As main does before anything runs.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("kubeconfig");
        std::fs::write(
            &path,
            "apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: 'https://127.0.0.1:1'}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: here, context: {cluster: c, user: u}}]
current-context: here
",
        )
        .unwrap();
        let global = GlobalArgs {
            cache_dir: None,
            no_cache: true,
            verbose: 0,
            state_dir: dir.path().join(".capw"),
            plugin_dir: None,
        };
        let source = ClusterSource {
            kubeconfig: Some(path.clone()),
            context: Some("elsewhere".into()),
        };
        let error = format!("{:#}", open(&global, &source).await.err().unwrap());
        assert!(error.contains("using context \"elsewhere\" of"), "{error}");
        assert!(error.contains(&path.display().to_string()), "{error}");
        // The named context is used, and nothing of the local state is opened.
        let source = ClusterSource {
            context: Some("here".into()),
            ..source
        };
        assert!(open(&global, &source).await.is_ok());
        assert!(!dir.path().join(".capw").exists());
    }
}
