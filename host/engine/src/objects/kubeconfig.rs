//! The cluster's admin kubeconfig, stored as Cluster API stores it: Secret
//! `<cluster>-kubeconfig`, key `value`, type `cluster.x-k8s.io/secret`, in the Cluster's
//! namespace, owned by the Cluster.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use capw_api::Cluster;
use kube::Resource as _;
use serde_json::{Value, json};

use super::{CLUSTER_LABEL, SECRET_KIND};

/// The Secret type Cluster API gives kubeconfig Secrets.
pub const KUBECONFIG_SECRET_TYPE: &str = "cluster.x-k8s.io/secret";

/// The data key of the kubeconfig in its Secret.
pub const KUBECONFIG_KEY: &str = "value";

/// Cluster API's label naming the cluster a Secret belongs to.
const CAPI_CLUSTER_LABEL: &str = "cluster.x-k8s.io/cluster-name";

/// Annotation: the endpoint (`host:port`) the kubeconfig was made for.
const ENDPOINT_ANNOTATION: &str = "capw.dev/endpoint";

/// Annotation: the uid of the Cluster it was made for.
const UID_ANNOTATION: &str = "capw.dev/cluster-uid";

/// Name of the Secret holding the admin kubeconfig of cluster `cluster`.
pub fn kubeconfig_secret_name(cluster: &str) -> String {
    format!("{cluster}-kubeconfig")
}

/// The admin kubeconfig of a cluster as stored. Its `Debug` shows no byte of it.
#[derive(Clone, PartialEq, Eq)]
pub struct StoredKubeconfig {
    /// The kubeconfig (YAML). Secret: never log it.
    pub value: Vec<u8>,
    /// The endpoint it was made for, `host:port`.
    pub endpoint: String,
    /// When its client certificate is to be renewed, where the host renews it (a hosted
    /// control plane's, [`super::hosted::RENEW_AFTER_ANNOTATION`]).
    pub renew_after: Option<jiff::Timestamp>,
}

impl std::fmt::Debug for StoredKubeconfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StoredKubeconfig")
            .field("endpoint", &self.endpoint)
            .finish_non_exhaustive()
    }
}

/// The kubeconfig Secret of cluster `cluster` (uid `cluster_uid`) in `namespace`, made for
/// `endpoint`, owned by the Cluster (so the Kubernetes garbage collector removes it too).
pub fn kubeconfig_object(
    namespace: &str,
    cluster: &str,
    cluster_uid: &str,
    endpoint: &str,
    kubeconfig: &[u8],
) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": SECRET_KIND,
        "metadata": {
            "name": kubeconfig_secret_name(cluster),
            "namespace": namespace,
            "labels": {CLUSTER_LABEL: cluster, CAPI_CLUSTER_LABEL: cluster},
            "annotations": {UID_ANNOTATION: cluster_uid, ENDPOINT_ANNOTATION: endpoint},
            "ownerReferences": [{
                "apiVersion": Cluster::api_version(&()),
                "kind": Cluster::kind(&()),
                "name": cluster,
                "uid": cluster_uid,
                "controller": true,
                "blockOwnerDeletion": true,
            }],
        },
        "type": KUBECONFIG_SECRET_TYPE,
        "data": {KUBECONFIG_KEY: STANDARD.encode(kubeconfig)},
    })
}

/// The kubeconfig in a stored Secret, if it belongs to `cluster_uid`.
pub fn stored_kubeconfig(object: &Value, cluster_uid: &str) -> Option<StoredKubeconfig> {
    let annotations = object.pointer("/metadata/annotations")?;
    if annotations.get(UID_ANNOTATION)?.as_str()? != cluster_uid {
        return None;
    }
    let endpoint = annotations.get(ENDPOINT_ANNOTATION)?.as_str()?.to_owned();
    let value = STANDARD
        .decode(object.pointer("/data/value")?.as_str()?)
        .ok()?;
    let renew_after = super::hosted::renewal_time(object);
    Some(StoredKubeconfig {
        value,
        endpoint,
        renew_after,
    })
}

/// The kubeconfig bytes of a stored kubeconfig Secret, whoever it belongs to (for `capw get
/// kubeconfig`).
pub fn kubeconfig_value(object: &Value) -> Option<Vec<u8>> {
    STANDARD
        .decode(object.pointer("/data/value")?.as_str()?)
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_secret_is_cluster_apis_and_reads_back_only_for_its_cluster() {
        let object = kubeconfig_object("ns", "c1", "uid-1", "10.0.0.1:6443", b"apiVersion: v1");
        assert_eq!(object["metadata"]["name"], "c1-kubeconfig");
        assert_eq!(object["type"], KUBECONFIG_SECRET_TYPE);
        assert_eq!(object["metadata"]["ownerReferences"][0]["uid"], "uid-1");
        let stored = stored_kubeconfig(&object, "uid-1").unwrap();
        assert_eq!(stored.value, b"apiVersion: v1");
        assert_eq!(stored.endpoint, "10.0.0.1:6443");
        assert!(!format!("{stored:?}").contains("apiVersion"));
        assert_eq!(stored_kubeconfig(&object, "uid-2"), None);
    }
}
