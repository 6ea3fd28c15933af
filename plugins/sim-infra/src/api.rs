//! The parts of simcloud's JSON API this provider uses, as serde types.
//!
//! Requests carry exactly the fields simcloud accepts (it refuses unknown ones). Responses
//! ignore fields they do not name and read unknown states as `Unknown`, so a newer simcloud
//! does not break an older provider.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// `POST /v1/networks`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CreateNetwork<'a> {
    /// Answers the network created earlier with this token instead of a conflict.
    pub client_token: &'a str,
    /// The simcloud cluster name.
    pub cluster: &'a str,
    /// Display name.
    pub name: &'a str,
}

/// A network; a cluster has at most one.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Network {
    /// `net-<n>`.
    pub id: String,
}

/// `GET /v1/networks`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct NetworkList {
    /// In id order.
    pub networks: Vec<Network>,
}

/// `POST /v1/load-balancers`; the port is left to simcloud's default, 6443.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CreateLoadBalancer<'a> {
    /// Answers the load balancer created earlier with this token instead of a conflict.
    pub client_token: &'a str,
    /// The simcloud cluster name.
    pub cluster: &'a str,
    /// Display name.
    pub name: &'a str,
}

/// Where a load balancer listens.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Endpoint {
    /// `lb-<n>.<domain>`.
    pub host: String,
    /// The listener port, 6443 by default.
    pub port: u16,
}

/// Lifecycle of a load balancer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LoadBalancerState {
    /// Created, not serving yet.
    Provisioning,
    /// Serving: its endpoint is usable.
    Active,
    /// A state this provider does not know; treated as not ready yet.
    #[serde(other)]
    Unknown,
}

/// A load balancer: the cluster's control-plane endpoint; a cluster has at most one.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct LoadBalancer {
    /// `lb-<n>`.
    pub id: String,
    /// Known from creation, usable once `active`.
    pub endpoint: Endpoint,
    /// Whether it serves yet.
    pub state: LoadBalancerState,
}

/// `GET /v1/load-balancers`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct LoadBalancerList {
    /// In id order.
    pub load_balancers: Vec<LoadBalancer>,
}

/// `GET /v1/zones`, in simcloud's order; the first is its default.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct ZoneList {
    /// Zone names.
    pub zones: Vec<String>,
}

/// What an instance is for, as simcloud names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Role {
    /// `init` and `join-control-plane` machines.
    ControlPlane,
    /// Worker machines.
    Worker,
}

/// `POST /v1/instances`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CreateInstance<'a> {
    /// The machine's idempotency key: simcloud never creates two instances for one token.
    pub client_token: &'a str,
    /// The Machine's name.
    pub name: &'a str,
    /// The simcloud cluster name; the cluster must have its network.
    pub cluster: &'a str,
    /// What the instance is for.
    pub role: Role,
    /// simcloud's first zone when absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub zone: Option<&'a str>,
    /// `capw.dev/...` tags naming the cluster, Machine and pool.
    pub tags: BTreeMap<&'a str, &'a str>,
    /// Standard base64. Secret: this struct is never logged.
    pub bootstrap_data: String,
}

/// Lifecycle of an instance: `pending` -> `booting` -> `running` | `failed`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum InstanceState {
    /// Accepted, not started.
    Pending,
    /// Started, reading its bootstrap data.
    Booting,
    /// Final: booted, its bootstrap data passed.
    Running,
    /// Final: `reason` says why.
    Failed,
    /// A state this provider does not know; treated as still provisioning.
    #[serde(other)]
    Unknown,
}

/// A network address of an instance.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Address {
    /// `private-ip` for now.
    #[serde(rename = "type")]
    pub kind: String,
    /// An IPv4 address from the cluster's network.
    pub address: String,
}

/// An instance as simcloud shows it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Instance {
    /// `i-<n>`.
    pub id: String,
    /// `sim://instances/<id>`.
    pub provider_id: String,
    /// The idempotency key it was created with.
    pub client_token: String,
    /// Display name: the Machine's name when capw created it.
    pub name: String,
    /// The zone it runs in.
    pub zone: String,
    /// Its addresses.
    #[serde(default)]
    pub addresses: Vec<Address>,
    /// Where it is in its lifecycle.
    pub state: InstanceState,
    /// Why it failed; empty otherwise.
    #[serde(default)]
    pub reason: String,
    /// Free-form tags; see [`crate::naming`] for capw's.
    #[serde(default)]
    pub tags: BTreeMap<String, String>,
}

/// `GET /v1/instances`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct InstanceList {
    /// In id order.
    pub instances: Vec<Instance>,
}

/// The body of every simcloud error answer.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct ErrorBody {
    /// What went wrong.
    pub error: ErrorDetail,
}

/// What simcloud says went wrong.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct ErrorDetail {
    /// Stable and machine-readable, e.g. `conflict`, `idempotency_mismatch`.
    pub code: String,
    /// For people.
    pub message: String,
    /// The request field at fault, as a dotted path.
    #[serde(default)]
    pub field: Option<String>,
}

/// simcloud's error codes this provider tells apart.
pub mod codes {
    /// A cluster's second network or load balancer, a network still in use, an instance token
    /// of a deleted instance.
    pub const CONFLICT: &str = "conflict";
    /// No network block or address left (409, like a conflict, but not one this provider can
    /// resolve by looking the resource up).
    pub const RESOURCE_EXHAUSTED: &str = "resource_exhausted";
    /// A client token already used with other parameters.
    pub const IDEMPOTENCY_MISMATCH: &str = "idempotency_mismatch";
    /// An instance created before its cluster's network.
    pub const FAILED_PRECONDITION: &str = "failed_precondition";
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_states_and_fields_are_tolerated() {
        let json = r#"{"id": "i-1", "provider_id": "sim://instances/i-1", "client_token": "k",
            "name": "m", "cluster": "c", "role": "worker", "zone": "zone-a",
            "network_id": "net-1", "addresses": [], "state": "terminating", "reason": "",
            "tags": {}, "created_at": 1}"#;
        let i: Instance = match serde_json::from_str(json) {
            Ok(i) => i,
            Err(e) => panic!("{e}"),
        };
        assert_eq!(i.state, InstanceState::Unknown);
    }

    #[test]
    fn create_instance_leaves_out_an_absent_zone() {
        let body = CreateInstance {
            client_token: "k",
            name: "m",
            cluster: "c",
            role: Role::ControlPlane,
            zone: None,
            tags: BTreeMap::new(),
            bootstrap_data: String::new(),
        };
        let json = serde_json::to_value(&body).unwrap_or_default();
        assert_eq!(json["role"], "control-plane");
        assert!(json.get("zone").is_none(), "{json}");
    }
}
