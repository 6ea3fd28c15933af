//! One workload cluster's connection: its client, the watch on its Nodes, the probe of its
//! API.

use std::collections::HashMap;
use std::time::Duration;

use futures::{FutureExt as _, StreamExt as _};
use k8s_openapi::api::core::v1::Node;
use kube::api::Api;
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::runtime::reflector::{self, Store};
use kube::runtime::{WatchStreamExt as _, watcher};
use kube::{Client, ResourceExt as _};

use crate::config::ClusterCacheConfig;
use crate::error::ClusterCacheError;
use crate::observation::{
    MAX_NODE_CONDITIONS, NodeReadiness, ObservedCondition, ObservedNode, ReadyStatus,
    sanitize_message, sanitize_reason,
};

/// A task aborted when its handle drops: a connection's watch ends with it.
#[derive(Debug)]
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// A client for one workload cluster and the store of its Nodes.
///
/// # Guarantees
///
/// The Node watch runs on its own task (retrying with kube-runtime's default backoff while
/// the API is down) and stops when the connection drops.
pub(crate) struct Connection {
    client: Client,
    nodes: Store<Node>,
    server: String,
    _watch: AbortOnDrop,
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection")
            .field("server", &self.server)
            .finish_non_exhaustive()
    }
}

impl Connection {
    /// A client for the kubeconfig `kubeconfig` with the config's connect timeout, and a
    /// watch of its Nodes that calls `changed` (from the watch's task) whenever a Node
    /// appears, goes, or changes what an observation shows of it. Connects to nothing
    /// before it returns.
    ///
    /// # Errors
    ///
    /// [`ClusterCacheError`] when the kubeconfig is unreadable or gives no client.
    pub async fn open(
        kubeconfig: &[u8],
        config: &ClusterCacheConfig,
        changed: impl Fn() + Send + 'static,
    ) -> Result<Self, ClusterCacheError> {
        let text =
            std::str::from_utf8(kubeconfig).map_err(|_| ClusterCacheError::MalformedKubeconfig)?;
        let parsed =
            Kubeconfig::from_yaml(text).map_err(|_| ClusterCacheError::MalformedKubeconfig)?;
        let mut client_config =
            kube::Config::from_custom_kubeconfig(parsed, &KubeConfigOptions::default())
                .await
                .map_err(ClusterCacheError::Kubeconfig)?;
        client_config.connect_timeout = Some(config.connect_timeout);
        // No retries inside the client: every call here has its own bound, and a refused
        // eviction (429 while a PodDisruptionBudget forbids it) is an answer to report, not a
        // failure to retry for minutes.
        client_config.default_retry = false;
        let server = server_of(&client_config.cluster_url);
        let client = Client::try_from(client_config).map_err(ClusterCacheError::Client)?;
        let (nodes, writer) = reflector::store();
        let stream = watcher(Api::<Node>::all(client.clone()), watcher::Config::default())
            .default_backoff()
            .reflect(writer);
        let watch = tokio::spawn(async move {
            // Errors are retried by the backoff; the probe says when the API is down.
            let mut stream = std::pin::pin!(stream);
            let mut changes = NodeChanges::default();
            while let Some(event) = stream.next().await {
                if let Ok(event) = event
                    && changes.apply(&event)
                {
                    changed();
                }
            }
        });
        Ok(Connection {
            client,
            nodes,
            server,
            _watch: AbortOnDrop(watch),
        })
    }

    /// `host:port` of the API server.
    pub fn server(&self) -> &str {
        &self.server
    }

    /// Asks `/readyz` within `timeout`.
    ///
    /// # Errors
    ///
    /// The sanitized reason it did not answer `ok` in time.
    pub async fn probe(&self, timeout: Duration) -> Result<(), String> {
        let request = http::Request::get("/readyz")
            .body(Vec::new())
            .map_err(|e| sanitize_message(&e.to_string()))?;
        match tokio::time::timeout(timeout, self.client.request_text(request)).await {
            Err(_) => Err(format!("no answer within {timeout:?}")),
            Ok(Err(e)) => Err(sanitize_message(&chain(&e))),
            Ok(Ok(body)) if body.trim() == "ok" => Ok(()),
            Ok(Ok(body)) => Err(sanitize_message(&format!("/readyz: {}", body.trim()))),
        }
    }

    /// Deletes the Node `name`, as Cluster API's Machine controller does once a machine is
    /// gone; a Node already gone is not an error.
    ///
    /// # Errors
    ///
    /// [`ClusterCacheError::DeleteNode`] with what the API said.
    pub async fn delete_node(&self, name: &str) -> Result<(), ClusterCacheError> {
        let api = Api::<Node>::all(self.client.clone());
        match api.delete(name, &Default::default()).await {
            Ok(_) => Ok(()),
            Err(kube::Error::Api(status)) if status.code == 404 => Ok(()),
            Err(source) => Err(ClusterCacheError::DeleteNode {
                node: name.to_owned(),
                source,
            }),
        }
    }

    /// One round of draining Node `name`, within `timeout`.
    ///
    /// # Errors
    ///
    /// [`ClusterCacheError::Drain`] or [`ClusterCacheError::Timeout`].
    pub async fn drain_round(
        &self,
        name: &str,
        timeout: Duration,
    ) -> Result<crate::DrainRound, ClusterCacheError> {
        crate::drain::round(&self.client, name, timeout).await
    }

    /// Whether the cluster holds bootstrap token `id`, asked within `timeout`.
    ///
    /// # Errors
    ///
    /// [`ClusterCacheError::Token`] or [`ClusterCacheError::Timeout`].
    pub async fn bootstrap_token(
        &self,
        id: &str,
        timeout: Duration,
    ) -> Result<crate::TokenPresence, ClusterCacheError> {
        crate::token::read(&self.client, id, timeout).await
    }

    /// Writes bootstrap token `token` within `timeout`.
    ///
    /// # Errors
    ///
    /// [`ClusterCacheError::Token`] or [`ClusterCacheError::Timeout`].
    pub async fn write_bootstrap_token(
        &self,
        token: &crate::BootstrapToken,
        timeout: Duration,
    ) -> Result<(), ClusterCacheError> {
        crate::token::write(&self.client, token, timeout).await
    }

    /// Applies what joins need (`access`), each object within `timeout`.
    ///
    /// # Errors
    ///
    /// [`ClusterCacheError::JoinAccess`] or [`ClusterCacheError::Timeout`].
    pub async fn apply_join_access(
        &self,
        access: &crate::JoinAccess,
        timeout: Duration,
    ) -> Result<(), ClusterCacheError> {
        crate::join_access::apply(&self.client, access, timeout).await
    }

    /// The watched Nodes, waiting at most `wait` for the watch's first list.
    pub async fn nodes(&self, wait: Duration) -> Option<Vec<ObservedNode>> {
        let ready = match self.nodes.wait_until_ready().now_or_never() {
            Some(result) => result.is_ok(),
            None => matches!(
                tokio::time::timeout(wait, self.nodes.wait_until_ready()).await,
                Ok(Ok(()))
            ),
        };
        ready.then(|| {
            self.nodes
                .state()
                .iter()
                .map(|n| observed_node(n))
                .collect()
        })
    }
}

/// What the watch has shown of each Node, to tell a change an observation would show (a Node
/// added or removed, its providerID or Ready condition) from one it would not (a heartbeat).
#[derive(Debug, Default)]
struct NodeChanges {
    seen: HashMap<String, ObservedNode>,
    /// The Nodes of a relist under way.
    relist: HashMap<String, ObservedNode>,
}

impl NodeChanges {
    /// Takes in `event`: whether what an observation shows changed.
    fn apply(&mut self, event: &watcher::Event<Node>) -> bool {
        match event {
            watcher::Event::Apply(node) => {
                let o = observed_node(node);
                self.seen.insert(o.name.clone(), o.clone()) != Some(o)
            }
            watcher::Event::Delete(node) => self.seen.remove(&node.name_any()).is_some(),
            watcher::Event::Init => {
                self.relist.clear();
                false
            }
            watcher::Event::InitApply(node) => {
                let o = observed_node(node);
                self.relist.insert(o.name.clone(), o);
                false
            }
            watcher::Event::InitDone => {
                let listed = std::mem::take(&mut self.relist);
                let changed = listed != self.seen;
                self.seen = listed;
                changed
            }
        }
    }
}

/// `host:port` of `uri`, without anything else a URL may carry.
fn server_of(uri: &http::Uri) -> String {
    let host = uri.host().unwrap_or_default();
    match uri.port_u16() {
        Some(port) => format!("{host}:{port}"),
        None => host.to_owned(),
    }
}

use capw_text::error_chain as chain;

/// A Node as plain data.
fn observed_node(node: &Node) -> ObservedNode {
    let ready = node
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .and_then(|cs| cs.iter().find(|c| c.type_ == "Ready"))
        .map(|c| NodeReadiness {
            status: status_of(&c.status),
            reason: sanitize_reason(c.reason.as_deref().unwrap_or_default()),
            message: sanitize_message(c.message.as_deref().unwrap_or_default()),
        });
    let conditions = node
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .into_iter()
        .flatten()
        .take(MAX_NODE_CONDITIONS)
        .map(|c| ObservedCondition {
            type_: sanitize_reason(&c.type_),
            status: status_of(&c.status),
            since: c.last_transition_time.as_ref().map(|t| t.0.as_second()),
        })
        .collect();
    ObservedNode {
        name: node.metadata.name.clone().unwrap_or_default(),
        provider_id: node.spec.as_ref().and_then(|s| s.provider_id.clone()),
        ready,
        conditions,
    }
}

fn status_of(status: &str) -> ReadyStatus {
    match status {
        "True" => ReadyStatus::True,
        "False" => ReadyStatus::False,
        _ => ReadyStatus::Unknown,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_server_is_host_and_port_only() {
        let uri: http::Uri = "https://user:pw@10.0.0.1:6443/path?x=1".parse().unwrap();
        assert_eq!(server_of(&uri), "10.0.0.1:6443");
    }
}
