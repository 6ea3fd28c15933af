//! simcloud's JSON API, as the serde types simcloud itself serves (`capw-sim-api`), and the
//! error codes this provider tells apart.
//!
//! Requests carry exactly the fields simcloud accepts (it refuses unknown ones). Responses
//! ignore fields they do not name. A state this provider's build does not know (a newer
//! simcloud's) makes the answer fail to parse, reported as a malformed answer: both sides are
//! built from the one set of types, so they only disagree across versions.

pub use capw_sim_api::{
    Address, CreateInstance, CreateLoadBalancer, CreateNetwork, Endpoint, Instance, InstanceList,
    InstanceState, LoadBalancer, LoadBalancerList, LoadBalancerState, Network, NetworkList, Role,
    ZoneList,
};

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
    use std::collections::BTreeMap;

    use super::*;

    #[test]
    fn unknown_fields_are_tolerated_and_unknown_states_refused() {
        let json = r#"{"id": "i-1", "provider_id": "sim://instances/i-1", "client_token": "k",
            "name": "m", "cluster": "c", "role": "worker", "zone": "zone-a",
            "network_id": "net-1", "addresses": [], "state": "booting", "reason": "",
            "tags": {}, "created_at": 1, "added_later": true}"#;
        let i: Instance = match serde_json::from_str(json) {
            Ok(i) => i,
            Err(e) => panic!("{e}"),
        };
        assert_eq!(i.state, InstanceState::Booting);
        let newer = json.replace(r#""booting""#, r#""terminating""#);
        assert!(serde_json::from_str::<Instance>(&newer).is_err());
    }

    #[test]
    fn create_instance_leaves_out_an_absent_zone() {
        let body = CreateInstance {
            client_token: "k".into(),
            name: "m".into(),
            cluster: "c".into(),
            role: Role::ControlPlane,
            zone: None,
            instance_type: None,
            tags: BTreeMap::new(),
            bootstrap_data: String::new(),
        };
        let json = serde_json::to_value(&body).unwrap_or_default();
        assert_eq!(json["role"], "control-plane");
        assert!(json.get("zone").is_none(), "{json}");
    }
}
