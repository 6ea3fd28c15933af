//! Fixtures for the unit tests: a cluster's secret items, requests. Contexts come from
//! `capw_sdk::testing`.

use std::sync::OnceLock;
use std::time::SystemTime;

use capw_sdk::bootstrap::{BootstrapRequest, ControlPlaneMember, SecretItem};
use capw_sdk::testing::machine;
use capw_sdk::types::{Endpoint, KubernetesVersion, MachineRole};

use crate::config::KeyAlgorithm;
use crate::pki::ClusterPki;
use crate::secrets;
use crate::token::BootstrapToken;

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

/// A request for machine `name` of `role`, with two members unless the role is `init`.
pub fn request(name: &str, role: MachineRole, items: Vec<SecretItem>) -> BootstrapRequest {
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
        machine: machine(name),
        role,
        version: KubernetesVersion {
            major: 1,
            minor: 35,
            patch: 2,
        },
        endpoint: endpoint(),
        secrets: items,
        control_plane_members: members,
        join: None,
    }
}
