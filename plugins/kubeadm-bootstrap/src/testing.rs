//! Fixtures for the unit tests: contexts, a cluster's secret items, requests.

use std::sync::OnceLock;
use std::time::{Duration, SystemTime};

use capw_sdk::Context;
use capw_sdk::bootstrap::{BootstrapRequest, ControlPlaneMember, SecretItem};
use capw_sdk::types::{ClusterRef, Endpoint, KubernetesVersion, MachineRef, MachineRole};

use crate::config::{KeyAlgorithm, KubeadmBootstrapConfig};
use crate::pki::ClusterPki;
use crate::secrets;
use crate::token::BootstrapToken;

/// A call context for cluster `c1` with the config `json`.
pub fn ctx(json: &str) -> Context<KubeadmBootstrapConfig> {
    let config = match capw_sdk::config::parse(json) {
        Ok(c) => c,
        Err(e) => panic!("test config {json}: {e}"),
    };
    Context::new(
        ClusterRef {
            namespace: "default".into(),
            name: "c1".into(),
            uid: "uid-c1".into(),
        },
        config,
        "key-1",
        Duration::from_secs(10),
    )
}

/// The secret items of one ECDSA cluster, made once per test binary.
pub fn items() -> Vec<SecretItem> {
    static ITEMS: OnceLock<Vec<SecretItem>> = OnceLock::new();
    ITEMS
        .get_or_init(|| {
            let pki = match ClusterPki::generate(KeyAlgorithm::EcdsaP256, SystemTime::now()) {
                Ok(p) => p,
                Err(e) => panic!("{e}"),
            };
            let token = match BootstrapToken::generate() {
                Ok(t) => t,
                Err(e) => panic!("{e}"),
            };
            match secrets::to_items(&pki, &token) {
                Ok(items) => items,
                Err(e) => panic!("{e}"),
            }
        })
        .clone()
}

/// The text of item `name` of `items`.
pub fn item(items: &[SecretItem], name: &str) -> String {
    match items.iter().find(|i| i.name == name) {
        Some(i) => String::from_utf8_lossy(&i.data).into_owned(),
        None => panic!("no item {name}"),
    }
}

/// `items` without `name`.
pub fn without(items: &[SecretItem], name: &str) -> Vec<SecretItem> {
    items.iter().filter(|i| i.name != name).cloned().collect()
}

/// The cluster endpoint of the fixtures.
pub fn endpoint() -> Endpoint {
    Endpoint {
        host: "lb-1.sim".into(),
        port: 6443,
    }
}

/// A request for machine `machine` of `role`, with two members unless the role is `init`.
pub fn request(machine: &str, role: MachineRole, items: Vec<SecretItem>) -> BootstrapRequest {
    let members = if role == MachineRole::Init {
        Vec::new()
    } else {
        vec![
            ControlPlaneMember {
                name: "c1-cp-b".into(),
                address: "fd00::2".into(),
            },
            ControlPlaneMember {
                name: "c1-cp-a".into(),
                address: "10.0.0.1".into(),
            },
        ]
    };
    BootstrapRequest {
        machine: MachineRef {
            name: machine.into(),
            uid: format!("uid-{machine}"),
        },
        role,
        version: KubernetesVersion {
            major: 1,
            minor: 35,
            patch: 2,
        },
        endpoint: endpoint(),
        secrets: items,
        control_plane_members: members,
    }
}
