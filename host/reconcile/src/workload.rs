//! What the host observed of the workload cluster itself (its API and its Nodes), and what
//! follows for each machine: its node reference and whether its node is healthy.

/// Condition type on a Cluster: the workload cluster's API answers through the endpoint.
pub const CONTROL_PLANE_AVAILABLE: &str = "ControlPlaneAvailable";

/// Condition type on a Machine: its Node's Ready condition.
pub const NODE_HEALTHY: &str = "NodeHealthy";

/// Reason of an unreachable workload cluster.
pub const WORKLOAD_UNREACHABLE: &str = "WorkloadClusterUnreachable";

/// Reason of a workload cluster there is no client for yet.
pub const WORKLOAD_NOT_CONNECTED: &str = "WorkloadClusterNotConnected";

/// The workload cluster, as observed at the start of a pass.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum WorkloadView {
    /// Workload cluster access is off: no kubeconfig is written, nothing is asked of the
    /// workload cluster, and a machine is ready when its infrastructure says it runs.
    #[default]
    Off,
    /// Access is on, but there is no client yet (no kubeconfig Secret, or it gives none);
    /// the message says why.
    NotConnected { message: String },
    /// The API answered through the endpoint; `nodes` is `None` before the first list.
    Available { nodes: Option<Vec<NodeView>> },
    /// The API did not answer; the message names the endpoint and the error.
    Unreachable { message: String },
}

impl WorkloadView {
    /// Access is on.
    pub fn observed(&self) -> bool {
        !matches!(self, WorkloadView::Off)
    }
}

/// One Node of the workload cluster.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeView {
    pub name: String,
    pub provider_id: Option<String>,
    /// Its Ready condition, when it has one.
    pub ready: Option<NodeCondition>,
    /// Each of its conditions with the time of its last transition, for health checks.
    pub conditions: Vec<NodeConditionSince>,
}

/// A Node condition's status and since when it holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeConditionSince {
    pub type_: String,
    /// `None` for `Unknown`.
    pub status: Option<bool>,
    /// Its last transition, seconds since the Unix epoch, when the Node says.
    pub since: Option<u64>,
}

/// A Node condition: `status` is `None` for `Unknown`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeCondition {
    pub status: Option<bool>,
    pub reason: String,
    pub message: String,
}

/// What to do with a Machine's `status.nodeRef`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NodeRefUpdate {
    /// Nothing is known now (the cluster is unreachable): leave it as it is.
    Keep,
    /// The Node with the machine's provider id.
    Set(String),
    /// No Node has the machine's provider id.
    Clear,
}

/// A machine's node, as the Machine's status shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeHealth {
    pub node_ref: NodeRefUpdate,
    /// `NodeHealthy`: `None` for `Unknown`.
    pub healthy: Option<bool>,
    pub reason: String,
    pub message: String,
}

/// The Node of the machine with `provider_id`, and its health; `None` when access is off
/// (the machine's node is then not observed).
pub fn node_health(provider_id: Option<&str>, workload: &WorkloadView) -> Option<NodeHealth> {
    let unknown = |node_ref, reason: &str, message: String| NodeHealth {
        node_ref,
        healthy: None,
        reason: reason.into(),
        message,
    };
    Some(match (workload, provider_id) {
        (WorkloadView::Off, _) => return None,
        (_, None) => unknown(
            NodeRefUpdate::Clear,
            "WaitingForProviderID",
            "the infrastructure has not reported the machine's provider id".into(),
        ),
        (WorkloadView::NotConnected { message }, _) => {
            unknown(NodeRefUpdate::Keep, WORKLOAD_NOT_CONNECTED, message.clone())
        }
        (WorkloadView::Unreachable { message }, _) => {
            unknown(NodeRefUpdate::Keep, WORKLOAD_UNREACHABLE, message.clone())
        }
        (WorkloadView::Available { nodes: None }, _) => unknown(
            NodeRefUpdate::Keep,
            "WaitingForNodeList",
            "the workload cluster's Nodes are not listed yet".into(),
        ),
        (WorkloadView::Available { nodes: Some(nodes) }, Some(id)) => {
            match nodes.iter().find(|n| n.provider_id.as_deref() == Some(id)) {
                None => NodeHealth {
                    node_ref: NodeRefUpdate::Clear,
                    healthy: Some(false),
                    reason: "NodeNotFound".into(),
                    message: format!("no Node has providerID {id}"),
                },
                Some(node) => match &node.ready {
                    None => unknown(
                        NodeRefUpdate::Set(node.name.clone()),
                        "NodeConditionsNotReported",
                        format!("Node {} reports no Ready condition", node.name),
                    ),
                    Some(c) => NodeHealth {
                        node_ref: NodeRefUpdate::Set(node.name.clone()),
                        healthy: c.status,
                        reason: if !c.reason.is_empty() {
                            c.reason.clone()
                        } else if c.status == Some(true) {
                            "NodeReady".into()
                        } else {
                            "NodeNotReady".into()
                        },
                        message: c.message.clone(),
                    },
                },
            }
        }
    })
}

/// Whether the node of the machine with `provider_id` counts as ready: always with access
/// off, else when its Node is Ready.
pub fn node_ready(provider_id: Option<&str>, workload: &WorkloadView) -> bool {
    node_health(provider_id, workload).is_none_or(|h| h.healthy == Some(true))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(name: &str, id: &str, ready: Option<bool>) -> NodeView {
        NodeView {
            name: name.into(),
            provider_id: Some(id.into()),
            ready: Some(NodeCondition {
                status: ready,
                reason: String::new(),
                message: "kubelet says so".into(),
            }),
            conditions: Vec::new(),
        }
    }

    #[test]
    fn the_node_is_found_by_provider_id_and_mirrors_ready() {
        let workload = WorkloadView::Available {
            nodes: Some(vec![
                node("n1", "sim://a", Some(true)),
                node("n2", "sim://b", Some(false)),
            ]),
        };
        let a = node_health(Some("sim://a"), &workload).unwrap();
        assert_eq!(a.node_ref, NodeRefUpdate::Set("n1".into()));
        assert_eq!((a.healthy, a.reason.as_str()), (Some(true), "NodeReady"));
        let b = node_health(Some("sim://b"), &workload).unwrap();
        assert_eq!(
            (b.healthy, b.reason.as_str()),
            (Some(false), "NodeNotReady")
        );
        assert_eq!(b.message, "kubelet says so");
        let c = node_health(Some("sim://c"), &workload).unwrap();
        assert_eq!(c.node_ref, NodeRefUpdate::Clear);
        assert!(!node_ready(Some("sim://c"), &workload));
    }

    #[test]
    fn unreachable_keeps_the_node_ref_and_is_unknown() {
        let workload = WorkloadView::Unreachable {
            message: "10.0.0.1:6443: connection refused".into(),
        };
        let h = node_health(Some("sim://a"), &workload).unwrap();
        assert_eq!(h.node_ref, NodeRefUpdate::Keep);
        assert_eq!((h.healthy, h.reason.as_str()), (None, WORKLOAD_UNREACHABLE));
    }

    #[test]
    fn with_access_off_nothing_is_observed_and_every_machine_counts() {
        assert_eq!(node_health(Some("x"), &WorkloadView::Off), None);
        assert!(node_ready(None, &WorkloadView::Off));
    }
}
