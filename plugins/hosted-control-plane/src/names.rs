//! The names of a control plane's objects, and the addresses they make: every one is the
//! Cluster's name and a dash first, in the Cluster's namespace, as the host requires.

use capw_sdk::types::ClusterRef;

/// The longest Cluster name whose objects Kubernetes takes: the etcd StatefulSet's name
/// (`<cluster>-etcd`) goes into its Pods' `controller-revision-hash` label with a dash and a
/// 10-character hash, and a label value holds at most 63 characters.
pub const MAX_CLUSTER_NAME: usize = 63 - "-etcd".len() - 11;

/// The port the API servers serve on, in their Pods and on their Service.
pub const API_SERVER_PORT: u16 = 6443;

/// etcd's client port.
pub const ETCD_CLIENT_PORT: u16 = 2379;

/// etcd's peer port.
pub const ETCD_PEER_PORT: u16 = 2380;

/// The API servers' component: their image's name, their Pods' `app.kubernetes.io/name`.
pub const KUBE_APISERVER: &str = "kube-apiserver";

/// The controller manager's component, as [`KUBE_APISERVER`] is the API servers'.
pub const KUBE_CONTROLLER_MANAGER: &str = "kube-controller-manager";

/// A Cluster name the control plane's objects cannot carry.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NameError {
    /// Too long for the names and labels derived from it.
    #[error(
        "metadata.name {name:?} has {} characters; a hosted control plane's objects need a \
         Cluster name of at most {MAX_CLUSTER_NAME}",
        .name.len()
    )]
    TooLong {
        /// The Cluster's name.
        name: String,
    },
    /// Not a DNS label starting with a letter, which a Service name must be.
    #[error(
        "metadata.name {name:?} is not a lowercase DNS label starting with a letter, which \
         the control plane's Service names must be"
    )]
    NotALabel {
        /// The Cluster's name.
        name: String,
    },
}

/// The names of one Cluster's control-plane objects.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Names {
    cluster: String,
    namespace: String,
}

impl Names {
    /// The names for `cluster`.
    ///
    /// # Errors
    ///
    /// [`NameError`] when the Cluster's name is longer than [`MAX_CLUSTER_NAME`] or is not a
    /// DNS label starting with a letter.
    pub fn new(cluster: &ClusterRef) -> Result<Self, NameError> {
        let name = &cluster.name;
        let label = name.starts_with(|c: char| c.is_ascii_lowercase())
            && !name.ends_with('-')
            && name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
        if !label {
            return Err(NameError::NotALabel { name: name.clone() });
        }
        if name.len() > MAX_CLUSTER_NAME {
            return Err(NameError::TooLong { name: name.clone() });
        }
        Ok(Self {
            cluster: name.clone(),
            namespace: cluster.namespace.clone(),
        })
    }

    /// The Cluster's name.
    pub fn cluster(&self) -> &str {
        &self.cluster
    }

    /// The Cluster's namespace, which every object shares.
    pub fn namespace(&self) -> &str {
        &self.namespace
    }

    fn of(&self, what: &str) -> String {
        format!("{}-{what}", self.cluster)
    }

    /// The API servers' Service.
    pub fn api_server_service(&self) -> String {
        self.of("apiserver")
    }

    /// The API servers' Deployment.
    pub fn api_server(&self) -> String {
        self.of("kube-apiserver")
    }

    /// The controller manager's Deployment.
    pub fn controller_manager(&self) -> String {
        self.of("kube-controller-manager")
    }

    /// The dedicated etcd's StatefulSet and its headless Service.
    pub fn etcd(&self) -> String {
        self.of("etcd")
    }

    /// The Secret of the API servers' certificates and keys.
    pub fn api_server_certs(&self) -> String {
        self.of("apiserver-certs")
    }

    /// The Secret of the controller manager's kubeconfig and signing keys.
    pub fn controller_manager_certs(&self) -> String {
        self.of("controller-manager-certs")
    }

    /// The Secret of etcd's serving and peer certificates.
    pub fn etcd_certs(&self) -> String {
        self.of("etcd-certs")
    }

    /// The Secret the host writes the cluster's access to a shared datastore into
    /// (contract 0.3's `shared-datastore.secret`).
    pub fn datastore(&self) -> String {
        self.of("datastore")
    }

    /// The API servers' Service's DNS names, shortest first.
    pub fn api_server_dns_names(&self) -> Vec<String> {
        service_dns_names(&self.api_server_service(), &self.namespace)
    }

    /// The API servers' Service's name within the management cluster: `<service>.<ns>.svc`.
    pub fn api_server_host(&self) -> String {
        format!("{}.{}.svc", self.api_server_service(), self.namespace)
    }

    /// Where the controller manager reaches the API servers.
    pub fn api_server_url(&self) -> String {
        format!("https://{}:{API_SERVER_PORT}", self.api_server_host())
    }

    /// Where the API servers reach etcd: its headless Service.
    pub fn etcd_url(&self) -> String {
        format!(
            "https://{}.{}.svc:{ETCD_CLIENT_PORT}",
            self.etcd(),
            self.namespace
        )
    }

    /// The etcd Pod of `ordinal`, as its StatefulSet names it.
    pub fn etcd_pod(&self, ordinal: u32) -> String {
        format!("{}-{ordinal}", self.etcd())
    }

    /// The DNS name of the etcd Pod of `ordinal` under the headless Service.
    pub fn etcd_pod_host(&self, ordinal: u32) -> String {
        format!(
            "{}.{}.{}.svc",
            self.etcd_pod(ordinal),
            self.etcd(),
            self.namespace
        )
    }

    /// Every name an etcd member of `members` serves: each Pod's names under the headless
    /// Service, the Service's own, and loopback for probes and tools inside the Pod.
    pub fn etcd_sans(&self, members: u32) -> Vec<String> {
        let service = self.etcd();
        let mut sans = Vec::new();
        for ordinal in 0..members {
            let pod = self.etcd_pod(ordinal);
            sans.push(pod.clone());
            sans.extend(service_dns_names(
                &format!("{pod}.{service}"),
                &self.namespace,
            ));
        }
        sans.extend(service_dns_names(&service, &self.namespace));
        sans.extend(["localhost".to_owned(), "127.0.0.1".to_owned()]);
        sans
    }
}

/// `name`, `name.ns`, `name.ns.svc` and `name.ns.svc.cluster.local`: how a Service (or a Pod
/// under a headless one) is reached from the management cluster's Pods.
fn service_dns_names(name: &str, namespace: &str) -> Vec<String> {
    vec![
        name.to_owned(),
        format!("{name}.{namespace}"),
        format!("{name}.{namespace}.svc"),
        format!("{name}.{namespace}.svc.cluster.local"),
    ]
}

#[cfg(test)]
mod tests {
    use capw_sdk::testing::cluster;

    use super::*;

    #[test]
    fn every_name_is_the_clusters_and_a_dash_first() {
        let n = Names::new(&cluster("team-a", "c1")).unwrap();
        for name in [
            n.api_server_service(),
            n.api_server(),
            n.controller_manager(),
            n.etcd(),
            n.api_server_certs(),
            n.controller_manager_certs(),
            n.etcd_certs(),
        ] {
            assert!(name.starts_with("c1-"), "{name}");
        }
        assert_eq!(n.api_server_url(), "https://c1-apiserver.team-a.svc:6443");
        assert_eq!(n.etcd_url(), "https://c1-etcd.team-a.svc:2379");
    }

    #[test]
    fn names_objects_cannot_carry_are_refused() {
        let longest = format!("c{}", "1".repeat(MAX_CLUSTER_NAME - 1));
        assert!(Names::new(&cluster("default", &longest)).is_ok());
        let longer = format!("{longest}1");
        assert!(matches!(
            Names::new(&cluster("default", &longer)),
            Err(NameError::TooLong { .. })
        ));
        for bad in ["1c", "c.1", "C1", "c1-", "", "c_1"] {
            assert!(
                matches!(
                    Names::new(&cluster("default", bad)),
                    Err(NameError::NotALabel { .. })
                ),
                "{bad}"
            );
        }
        // The etcd StatefulSet's revision label: name, dash, 10-character hash.
        assert!(format!("{longest}-etcd-0123456789").len() <= 63);
    }
}
