//! Draining a Node before its machine goes, as `kubectl drain` does: cordon it, then ask the
//! eviction API to move every Pod off it, so that PodDisruptionBudgets hold. DaemonSet Pods
//! and mirror Pods stay, as kubectl leaves them (their controller would put them back, or the
//! kubelet owns them); the API server refuses an eviction a budget forbids, and that Pod stays
//! until a later round may take it.
//!
//! One call is one round: it evicts what may go now and reports what is left. The caller
//! repeats rounds until nothing is left or its own deadline passes. On a Node whose kubelet
//! stopped reporting, an evicted Pod is not waited for: no kubelet will finish it.

use std::collections::BTreeMap;
use std::time::Duration;

use k8s_openapi::api::core::v1::{Node, Pod};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use kube::api::{Api, EvictParams, ListParams, Patch, PatchParams};
use kube::core::{Selector, SelectorExt as _};

use crate::error::ClusterCacheError;
use crate::observation::sanitize_message;

/// The annotation the kubelet puts on a mirror Pod (the API's copy of a static Pod).
const MIRROR_ANNOTATION: &str = "kubernetes.io/config.mirror";

/// What one round of a drain found and did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DrainRound {
    /// The Node does not exist (any more): there is nothing to drain.
    pub node_gone: bool,
    /// Pods this round evicted (`namespace/name`); they are terminating now.
    pub evicted: Vec<String>,
    /// Pods an eviction was refused for, with why.
    pub blocked: Vec<BlockedPod>,
    /// Pods being deleted and not gone yet (`namespace/name`).
    pub terminating: Vec<String>,
    /// DaemonSet and mirror Pods, left on the Node as kubectl leaves them.
    pub skipped: usize,
    /// Pods being deleted on a Node whose kubelet stopped reporting (`Ready` is `Unknown`):
    /// nothing will finish them, so the drain does not wait for them (Cluster API and
    /// `kubectl drain --skip-wait-for-delete-timeout` do the same).
    pub abandoned: usize,
}

impl DrainRound {
    /// Nothing that must leave is left on the Node.
    pub fn drained(&self) -> bool {
        self.evicted.is_empty() && self.blocked.is_empty() && self.terminating.is_empty()
    }
}

/// A Pod the eviction API would not evict now.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlockedPod {
    /// `namespace/name`.
    pub pod: String,
    /// The PodDisruptionBudgets of its namespace whose selector matches it, by name.
    pub budgets: Vec<String>,
    /// What the API server said (no credentials in it: it is the API's own status message).
    pub message: String,
}

/// Why a Pod stays on a drained Node without an eviction; `None`: it must go.
fn skip_reason(pod: &Pod) -> Option<&'static str> {
    let meta = &pod.metadata;
    if meta
        .annotations
        .as_ref()
        .is_some_and(|a| a.contains_key(MIRROR_ANNOTATION))
    {
        return Some("mirror");
    }
    let daemon_set = meta.owner_references.iter().flatten().any(|o| {
        o.controller == Some(true) && o.kind == "DaemonSet" && o.api_version.starts_with("apps/")
    });
    daemon_set.then_some("DaemonSet")
}

fn pod_name(pod: &Pod) -> String {
    format!(
        "{}/{}",
        pod.metadata.namespace.as_deref().unwrap_or_default(),
        pod.metadata.name.as_deref().unwrap_or_default()
    )
}

/// The budgets among `budgets` whose selector matches `labels`, by name, sorted. As in
/// `policy/v1`, an empty selector matches every Pod of the namespace and a missing one none;
/// one that does not parse matches nothing.
fn budgets_of(labels: &BTreeMap<String, String>, budgets: &[PodDisruptionBudget]) -> Vec<String> {
    let mut names: Vec<String> = budgets
        .iter()
        .filter(|b| {
            let Some(selector) = b.spec.as_ref().and_then(|s| s.selector.clone()) else {
                return false;
            };
            Selector::try_from(selector).is_ok_and(|s| s.matches(labels))
        })
        .filter_map(|b| b.metadata.name.clone())
        .collect();
    names.sort();
    names
}

/// One round of draining Node `node`: cordon it (unless it already is), then evict each Pod
/// on it that must leave and is not leaving yet.
///
/// # Errors
///
/// [`ClusterCacheError::Drain`] when the API refuses or fails the cordon or the listing;
/// [`ClusterCacheError::Timeout`] when the round takes longer than `timeout`. A refused
/// eviction is not an error: it is a [`BlockedPod`].
pub(crate) async fn round(
    client: &kube::Client,
    node: &str,
    timeout: Duration,
) -> Result<DrainRound, ClusterCacheError> {
    match tokio::time::timeout(timeout, round_unbounded(client, node)).await {
        Ok(result) => result,
        Err(_) => Err(ClusterCacheError::Timeout {
            what: format!("draining Node {node}"),
            after: timeout,
        }),
    }
}

async fn round_unbounded(
    client: &kube::Client,
    node: &str,
) -> Result<DrainRound, ClusterCacheError> {
    let failed = |source| ClusterCacheError::Drain {
        node: node.to_owned(),
        source,
    };
    let nodes = Api::<Node>::all(client.clone());
    let Some(current) = nodes.get_opt(node).await.map_err(failed)? else {
        return Ok(DrainRound {
            node_gone: true,
            ..DrainRound::default()
        });
    };
    let unreachable = (current.status.as_ref())
        .and_then(|st| st.conditions.as_ref())
        .is_some_and(|cs| {
            cs.iter()
                .any(|c| c.type_ == "Ready" && c.status == "Unknown")
        });
    let cordoned = current
        .spec
        .as_ref()
        .and_then(|s| s.unschedulable)
        .unwrap_or(false);
    if !cordoned {
        let patch = serde_json::json!({ "spec": { "unschedulable": true } });
        nodes
            .patch(node, &PatchParams::default(), &Patch::Merge(&patch))
            .await
            .map_err(failed)?;
    }
    let pods = Api::<Pod>::all(client.clone())
        .list(&ListParams::default().fields(&format!("spec.nodeName={node}")))
        .await
        .map_err(failed)?;
    let mut out = DrainRound::default();
    let mut budgets: BTreeMap<String, Vec<PodDisruptionBudget>> = BTreeMap::new();
    for pod in pods.items {
        if skip_reason(&pod).is_some() {
            out.skipped += 1;
            continue;
        }
        let name = pod_name(&pod);
        if pod.metadata.deletion_timestamp.is_some() {
            if unreachable {
                out.abandoned += 1;
            } else {
                out.terminating.push(name);
            }
            continue;
        }
        let namespace = pod.metadata.namespace.clone().unwrap_or_default();
        let api = Api::<Pod>::namespaced(client.clone(), &namespace);
        let pod_name_only = pod.metadata.name.clone().unwrap_or_default();
        match api.evict(&pod_name_only, &EvictParams::default()).await {
            Ok(_) => out.evicted.push(name),
            // Gone between the listing and the eviction.
            Err(kube::Error::Api(status)) if status.code == 404 => {}
            // 429: a budget forbids it now; 500: the API cannot decide (a Pod under two
            // budgets). Either way the Pod stays, and the round says why.
            Err(kube::Error::Api(status)) if matches!(status.code, 429 | 500) => {
                let in_namespace = match budgets.get(&namespace) {
                    Some(list) => list,
                    None => {
                        let listed =
                            Api::<PodDisruptionBudget>::namespaced(client.clone(), &namespace)
                                .list(&ListParams::default())
                                .await
                                .map(|l| l.items)
                                .unwrap_or_default();
                        budgets.entry(namespace.clone()).or_insert(listed)
                    }
                };
                let labels = pod.metadata.labels.clone().unwrap_or_default();
                out.blocked.push(BlockedPod {
                    pod: name,
                    budgets: budgets_of(&labels, in_namespace),
                    message: sanitize_message(&status.message),
                });
            }
            Err(source) => return Err(failed(source)),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::policy::v1::PodDisruptionBudgetSpec;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{
        LabelSelector, ObjectMeta, OwnerReference,
    };

    fn pod(owner: Option<&str>, annotations: &[(&str, &str)]) -> Pod {
        Pod {
            metadata: ObjectMeta {
                name: Some("p".into()),
                namespace: Some("ns".into()),
                annotations: Some(
                    annotations
                        .iter()
                        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                        .collect(),
                ),
                owner_references: owner.map(|kind| {
                    vec![OwnerReference {
                        api_version: "apps/v1".into(),
                        kind: kind.into(),
                        name: "owner".into(),
                        uid: "u".into(),
                        controller: Some(true),
                        ..OwnerReference::default()
                    }]
                }),
                ..ObjectMeta::default()
            },
            ..Pod::default()
        }
    }

    #[test]
    fn daemon_set_and_mirror_pods_stay_and_the_others_go() {
        assert_eq!(skip_reason(&pod(Some("DaemonSet"), &[])), Some("DaemonSet"));
        assert_eq!(
            skip_reason(&pod(None, &[(MIRROR_ANNOTATION, "abc")])),
            Some("mirror")
        );
        assert_eq!(skip_reason(&pod(Some("ReplicaSet"), &[])), None);
        assert_eq!(skip_reason(&pod(None, &[])), None);
    }

    fn budget(name: &str, labels: Option<&[(&str, &str)]>) -> PodDisruptionBudget {
        PodDisruptionBudget {
            metadata: ObjectMeta {
                name: Some(name.into()),
                ..ObjectMeta::default()
            },
            spec: Some(PodDisruptionBudgetSpec {
                selector: labels.map(|l| LabelSelector {
                    match_labels: Some(
                        l.iter()
                            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                            .collect(),
                    ),
                    ..LabelSelector::default()
                }),
                ..PodDisruptionBudgetSpec::default()
            }),
            status: None,
        }
    }

    #[test]
    fn a_blocked_pod_names_the_budgets_that_select_it() {
        let labels = BTreeMap::from([("app".to_owned(), "web".to_owned())]);
        let budgets = [
            budget("web", Some(&[("app", "web")])),
            budget("db", Some(&[("app", "db")])),
            budget("none", None),
            budget("all", Some(&[])),
        ];
        assert_eq!(budgets_of(&labels, &budgets), ["all", "web"]);
    }

    #[test]
    fn a_round_is_drained_only_when_nothing_must_still_leave() {
        let mut r = DrainRound {
            skipped: 2,
            ..DrainRound::default()
        };
        assert!(r.drained());
        r.terminating.push("ns/p".into());
        assert!(!r.drained());
    }
}
