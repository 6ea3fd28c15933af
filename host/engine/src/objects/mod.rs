//! The objects the executor reads and writes, their names and keys.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use capw_api::{ClusterInfrastructure, ClusterInfrastructureSpec, Time};
use capw_topology::DesiredState;
use serde::Serialize;
use serde_json::{Value, json};

use crate::error::EngineError;

pub mod hosted;
pub mod kubeconfig;

pub use capw_api::{CLUSTER_FINALIZER, CLUSTER_LABEL, MACHINE_FINALIZER};

/// Kind of the Secret-like object holding a cluster's secrets.
pub const SECRET_KIND: &str = "Secret";

/// The prefix of the control-plane provider's condition types on a Cluster: the host's own
/// conditions never hold a `/`, so the provider's cannot collide with them (its `Available` is
/// `controlplane.capw.dev/Available`, beside the host's `ControlPlaneAvailable`).
pub const CONTROL_PLANE_PROVIDER_PREFIX: &str = "controlplane.capw.dev/";

/// The cluster secrets' item holding the certificate authority (PEM) of a control plane a
/// service runs, as the service handed it out.
pub const SERVICE_CA_ITEM: &str = "ca.crt";

/// The cluster secrets' item holding the join token (JSON) a service issued for workers.
pub const SERVICE_JOIN_TOKEN_ITEM: &str = "service-join-token.json";

/// Name of the Secret holding the cluster secrets of cluster `cluster`.
pub fn cluster_secret_name(cluster: &str) -> String {
    format!("{cluster}-cluster-secrets")
}

/// Now, as a Kubernetes timestamp (whole seconds).
pub fn now() -> Time {
    let t = jiff::Timestamp::now();
    Time(jiff::Timestamp::from_second(t.as_second()).unwrap_or(t))
}

/// A typed object as JSON.
pub(crate) fn encode<T: Serialize>(value: &T, what: &str) -> Result<Value, EngineError> {
    serde_json::to_value(value).map_err(|source| EngineError::Malformed {
        what: what.into(),
        source,
    })
}

/// What the infrastructure provider last said about a cluster: the status of its
/// `ClusterInfrastructure` object.
pub type InfrastructureRecord = capw_api::ClusterInfrastructureStatus;

/// The `ClusterInfrastructure` object of cluster `name` in `namespace`, without its status.
pub(crate) fn infrastructure_object(namespace: &str, name: &str) -> ClusterInfrastructure {
    let mut object = ClusterInfrastructure::new(name, ClusterInfrastructureSpec {});
    object.metadata.namespace = Some(namespace.to_owned());
    object.metadata.labels = Some([(CLUSTER_LABEL.to_owned(), name.to_owned())].into());
    object
}

/// `desired` as the record keeps it.
pub(crate) fn applied(desired: &DesiredState) -> Option<Value> {
    serde_json::to_value(desired).ok()
}

/// The desired state a record kept; none when there is none or it no longer reads (kept by a
/// host whose topology had another shape).
pub(crate) fn applied_state(record: &InfrastructureRecord) -> Option<DesiredState> {
    serde_json::from_value(record.applied.clone()?).ok()
}

/// One item of a cluster's secrets: name and bytes.
pub type SecretItems = Vec<(String, Vec<u8>)>;

/// The Secret object of a cluster's secrets: `data` holds each item in base64, as in
/// Kubernetes; the cluster's uid is kept so a recreated cluster never takes old secrets.
pub fn secret_object(
    namespace: &str,
    cluster: &str,
    cluster_uid: &str,
    items: &SecretItems,
) -> Value {
    let data: serde_json::Map<String, Value> = items
        .iter()
        .map(|(k, v)| (secret_key(k), Value::String(STANDARD.encode(v))))
        .collect();
    json!({
        "apiVersion": "v1",
        "kind": SECRET_KIND,
        "metadata": {
            "name": cluster_secret_name(cluster),
            "namespace": namespace,
            "labels": {CLUSTER_LABEL: cluster},
            "annotations": {"capw.dev/cluster-uid": cluster_uid},
        },
        "type": "capw.dev/cluster-secrets",
        "data": data,
    })
}

/// The items of a stored cluster Secret, if it belongs to `cluster_uid`.
pub fn secret_items(object: &Value, cluster_uid: &str) -> Option<SecretItems> {
    let uid = object
        .pointer("/metadata/annotations/capw.dev~1cluster-uid")
        .and_then(Value::as_str)?;
    if uid != cluster_uid {
        return None;
    }
    let data = object.get("data")?.as_object()?;
    data.iter()
        .map(|(k, v)| Some((item_name(k), STANDARD.decode(v.as_str()?).ok()?)))
        .collect()
}

/// The items of a stored cluster Secret, for whichever cluster uid it names: what an admin
/// holding the Secret reads.
pub fn stored_secret_items(object: &Value) -> Option<SecretItems> {
    let uid = object
        .pointer("/metadata/annotations/capw.dev~1cluster-uid")
        .and_then(Value::as_str)?;
    secret_items(object, uid)
}

/// A Secret data key for an item name. Kubernetes allows only `[-._a-zA-Z0-9]` in keys,
/// and item names hold `/` (`etcd/ca.crt`): `_` becomes `__`, any other byte outside the
/// allowed set `_xHH`. Names without `_` or other bytes are kept as they are.
pub fn secret_key(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for b in name.bytes() {
        match b {
            b'_' => out.push_str("__"),
            b'-' | b'.' => out.push(b as char),
            _ if b.is_ascii_alphanumeric() => out.push(b as char),
            _ => out.push_str(&format!("_x{b:02x}")),
        }
    }
    out
}

/// The item name of a Secret data key written by [`secret_key`]; a key that is not a valid
/// escape is taken as written.
pub fn item_name(key: &str) -> String {
    fn unescape(key: &str) -> Option<String> {
        let mut out = Vec::with_capacity(key.len());
        let mut bytes = key.bytes();
        while let Some(b) = bytes.next() {
            if b != b'_' {
                out.push(b);
                continue;
            }
            match bytes.next()? {
                b'_' => out.push(b'_'),
                b'x' => {
                    let hex = [bytes.next()?, bytes.next()?];
                    out.push(u8::from_str_radix(std::str::from_utf8(&hex).ok()?, 16).ok()?);
                }
                _ => return None,
            }
        }
        String::from_utf8(out).ok()
    }
    unescape(key).unwrap_or_else(|| key.to_owned())
}

/// A fresh machine name for a pool of `cluster`: `<cluster>-<pool>-<5 hex>`.
pub fn machine_name(cluster: &str, pool: &str) -> String {
    let suffix = uuid::Uuid::new_v4().simple().to_string();
    format!("{cluster}-{pool}-{}", &suffix[..5])
}

/// The idempotency key of a machine: stable for its life, unique across recreated clusters.
pub fn machine_key(cluster_uid: &str, machine: &str) -> String {
    format!("{cluster_uid}-{machine}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_round_trip_only_for_their_cluster() {
        let items = vec![
            ("ca.crt".to_string(), b"\x00pem".to_vec()),
            ("etcd/ca.crt".to_string(), b"etcd".to_vec()),
            ("a_b/é".to_string(), b"odd".to_vec()),
        ];
        let object = secret_object("default", "c1", "uid-1", &items);
        let keys: Vec<&String> = object["data"].as_object().unwrap().keys().collect();
        // Kubernetes' rule for Secret data keys.
        for key in &keys {
            assert!(
                key.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"-._".contains(&b)),
                "{key}"
            );
        }
        assert!(keys.contains(&&"etcd_x2fca.crt".to_string()), "{keys:?}");
        let mut back = secret_items(&object, "uid-1").unwrap();
        back.sort();
        let mut want = items;
        want.sort();
        assert_eq!(back, want);
        assert_eq!(secret_items(&object, "uid-2"), None);
        let mut stored = stored_secret_items(&object).unwrap();
        stored.sort();
        assert_eq!(stored, want);
    }

    #[test]
    fn keys_written_before_escaping_read_as_written() {
        assert_eq!(item_name("etcd/ca.crt"), "etcd/ca.crt");
        assert_eq!(item_name("sa_key"), "sa_key");
        assert_eq!(item_name("a__b"), "a_b");
    }

    #[test]
    fn machine_names_are_fresh_and_keys_stable() {
        let a = machine_name("c1", "md-0");
        assert!(a.starts_with("c1-md-0-") && a.len() == "c1-md-0-".len() + 5);
        assert_ne!(a, machine_name("c1", "md-0"));
        assert_eq!(machine_key("u", &a), machine_key("u", &a));
    }
}
