//! The Secrets the host mints from the cluster's CAs for the control plane: what each holds
//! and the file names the workloads read them by ([`crate::manifests`] mounts each Secret as a
//! directory).
//!
//! A certificate request's `key` names the Secret's data keys `<key>.crt` and `<key>.key`
//! (and `<key>.conf` with a kubeconfig); the CA materials have fixed keys (`ca.crt`,
//! `ca.key`, `front-proxy-ca.crt`, `etcd-ca.crt`, `sa.key`, `sa.pub`). The CA keys stay with
//! the host: this provider only names what goes where.

use capw_sdk::control_plane::{
    CertificateAuthority, CertificateRequest, CertificateSecret, CertificateUsage, SecretMaterial,
};
use capw_sdk::types::Endpoint;

use crate::names::Names;

/// The first address of the workload cluster's Service range (`10.96.0.0/12`, the API
/// servers' `--service-cluster-ip-range`): the `kubernetes` Service's ClusterIP, which Pods
/// of the workload cluster reach the API servers at.
pub const KUBERNETES_SERVICE_IP: &str = "10.96.0.1";

/// The API server's serving certificate.
pub const API_SERVER: &str = "apiserver";
/// The API server's client certificate toward kubelets.
pub const API_SERVER_KUBELET_CLIENT: &str = "apiserver-kubelet-client";
/// The API server's client certificate toward etcd.
pub const API_SERVER_ETCD_CLIENT: &str = "apiserver-etcd-client";
/// The API server's client certificate toward aggregated API servers.
pub const FRONT_PROXY_CLIENT: &str = "front-proxy-client";
/// The controller manager's client certificate, with its kubeconfig.
pub const CONTROLLER_MANAGER: &str = "controller-manager";
/// etcd's serving certificate.
pub const ETCD_SERVER: &str = "etcd-server";
/// etcd's peer certificate.
pub const ETCD_PEER: &str = "etcd-peer";

/// The etcd members of the dedicated datastore.
pub const ETCD_MEMBERS: u32 = 1;

/// Every Secret the control plane needs minted, for the infrastructure's `endpoint` when it
/// gives one; with a shared datastore, none for an etcd of its own.
pub fn secrets(
    names: &Names,
    endpoint: Option<&Endpoint>,
    shared_datastore: bool,
) -> Vec<CertificateSecret> {
    let mut secrets = vec![api_server(names, endpoint), controller_manager(names)];
    if !shared_datastore {
        secrets.push(etcd(names));
    }
    secrets
}

fn request(
    key: &str,
    authority: CertificateAuthority,
    usage: CertificateUsage,
    common_name: &str,
) -> CertificateRequest {
    CertificateRequest {
        key: key.into(),
        authority,
        usage,
        common_name: common_name.into(),
        organizations: Vec::new(),
        sans: Vec::new(),
        kubeconfig_server: None,
    }
}

/// The names the API servers serve: their Service's, the workload cluster's `kubernetes`
/// Service's and its ClusterIP, and the infrastructure's endpoint when given.
pub fn api_server_sans(names: &Names, endpoint: Option<&Endpoint>) -> Vec<String> {
    let mut sans = names.api_server_dns_names();
    sans.extend(
        [
            "kubernetes",
            "kubernetes.default",
            "kubernetes.default.svc",
            "kubernetes.default.svc.cluster.local",
            KUBERNETES_SERVICE_IP,
        ]
        .map(String::from),
    );
    if let Some(e) = endpoint
        && !e.host.is_empty()
        && !sans.contains(&e.host)
    {
        sans.push(e.host.clone());
    }
    sans
}

/// `<cluster>-apiserver-certs`: the API servers' serving certificate and their three client
/// certificates, the CAs they trust and the service-account keys.
fn api_server(names: &Names, endpoint: Option<&Endpoint>) -> CertificateSecret {
    use CertificateAuthority::{Cluster, Etcd, FrontProxy};
    use CertificateUsage::{Client, Server};
    let serving = CertificateRequest {
        sans: api_server_sans(names, endpoint),
        ..request(API_SERVER, Cluster, Server, "kube-apiserver")
    };
    let kubelet_client = CertificateRequest {
        organizations: vec!["system:masters".into()],
        ..request(
            API_SERVER_KUBELET_CLIENT,
            Cluster,
            Client,
            "kube-apiserver-kubelet-client",
        )
    };
    CertificateSecret {
        name: names.api_server_certs(),
        certificates: vec![
            serving,
            kubelet_client,
            request(
                API_SERVER_ETCD_CLIENT,
                Etcd,
                Client,
                "kube-apiserver-etcd-client",
            ),
            request(FRONT_PROXY_CLIENT, FrontProxy, Client, "front-proxy-client"),
        ],
        materials: vec![
            SecretMaterial::ClusterCaCertificate,
            SecretMaterial::FrontProxyCaCertificate,
            SecretMaterial::EtcdCaCertificate,
            SecretMaterial::ServiceAccountKeys,
        ],
    }
}

/// `<cluster>-controller-manager-certs`: its identity with a kubeconfig for the API servers'
/// Service, the cluster CA with its key (it signs kubelets' certificates) and the
/// service-account keys (it signs tokens).
fn controller_manager(names: &Names) -> CertificateSecret {
    CertificateSecret {
        name: names.controller_manager_certs(),
        certificates: vec![CertificateRequest {
            kubeconfig_server: Some(names.api_server_url()),
            ..request(
                CONTROLLER_MANAGER,
                CertificateAuthority::Cluster,
                CertificateUsage::Client,
                "system:kube-controller-manager",
            )
        }],
        materials: vec![
            SecretMaterial::ClusterCa,
            SecretMaterial::ServiceAccountKeys,
        ],
    }
}

/// `<cluster>-etcd-certs`: etcd's serving and peer certificates for its Pods' and Service's
/// names, and the etcd CA it trusts its clients and peers by.
fn etcd(names: &Names) -> CertificateSecret {
    let sans = names.etcd_sans(ETCD_MEMBERS);
    let cn = names.etcd();
    CertificateSecret {
        name: names.etcd_certs(),
        certificates: vec![
            CertificateRequest {
                sans: sans.clone(),
                ..request(
                    ETCD_SERVER,
                    CertificateAuthority::Etcd,
                    CertificateUsage::Server,
                    &cn,
                )
            },
            CertificateRequest {
                sans,
                ..request(
                    ETCD_PEER,
                    CertificateAuthority::Etcd,
                    CertificateUsage::Peer,
                    &cn,
                )
            },
        ],
        materials: vec![SecretMaterial::EtcdCaCertificate],
    }
}

#[cfg(test)]
mod tests {
    use capw_sdk::testing::cluster;

    use super::*;

    fn names() -> Names {
        Names::new(&cluster("team-a", "c1")).unwrap()
    }

    fn find<'a>(secrets: &'a [CertificateSecret], name: &str) -> &'a CertificateSecret {
        (secrets.iter().find(|s| s.name == name)).unwrap_or_else(|| panic!("no Secret {name}"))
    }

    fn cert<'a>(secret: &'a CertificateSecret, key: &str) -> &'a CertificateRequest {
        (secret.certificates.iter().find(|c| c.key == key))
            .unwrap_or_else(|| panic!("no {key} in {}", secret.name))
    }

    #[test]
    fn the_api_server_serves_its_service_the_kubernetes_service_and_the_endpoint() {
        let endpoint = Endpoint {
            host: "203.0.113.10".into(),
            port: 6443,
        };
        let secrets = secrets(&names(), Some(&endpoint), false);
        let serving = cert(find(&secrets, "c1-apiserver-certs"), API_SERVER);
        assert_eq!(
            serving.sans,
            [
                "c1-apiserver",
                "c1-apiserver.team-a",
                "c1-apiserver.team-a.svc",
                "c1-apiserver.team-a.svc.cluster.local",
                "kubernetes",
                "kubernetes.default",
                "kubernetes.default.svc",
                "kubernetes.default.svc.cluster.local",
                "10.96.0.1",
                "203.0.113.10",
            ]
        );
        assert_eq!(
            (serving.authority, serving.usage),
            (CertificateAuthority::Cluster, CertificateUsage::Server)
        );
        // Without an endpoint, the Service's names only; an endpoint named already is not
        // named twice.
        let without = secrets_sans(None);
        assert_eq!(without.len(), 9);
        let again = Endpoint {
            host: "kubernetes".into(),
            port: 443,
        };
        assert_eq!(secrets_sans(Some(&again)), without);
    }

    fn secrets_sans(endpoint: Option<&Endpoint>) -> Vec<String> {
        api_server_sans(&names(), endpoint)
    }

    #[test]
    fn the_api_server_secret_holds_its_clients_and_what_it_trusts() {
        let secrets = secrets(&names(), None, false);
        let s = find(&secrets, "c1-apiserver-certs");
        let kubelet = cert(s, API_SERVER_KUBELET_CLIENT);
        assert_eq!(kubelet.organizations, ["system:masters"]);
        assert_eq!(kubelet.usage, CertificateUsage::Client);
        assert_eq!(
            cert(s, API_SERVER_ETCD_CLIENT).authority,
            CertificateAuthority::Etcd
        );
        assert_eq!(
            cert(s, FRONT_PROXY_CLIENT).authority,
            CertificateAuthority::FrontProxy
        );
        assert_eq!(
            s.materials,
            [
                SecretMaterial::ClusterCaCertificate,
                SecretMaterial::FrontProxyCaCertificate,
                SecretMaterial::EtcdCaCertificate,
                SecretMaterial::ServiceAccountKeys,
            ]
        );
    }

    #[test]
    fn the_controller_manager_gets_a_kubeconfig_for_the_service_and_the_signing_ca() {
        let secrets = secrets(&names(), None, false);
        let s = find(&secrets, "c1-controller-manager-certs");
        let c = cert(s, CONTROLLER_MANAGER);
        assert_eq!(c.common_name, "system:kube-controller-manager");
        assert_eq!(
            c.kubeconfig_server.as_deref(),
            Some("https://c1-apiserver.team-a.svc:6443")
        );
        assert_eq!(
            s.materials,
            [
                SecretMaterial::ClusterCa,
                SecretMaterial::ServiceAccountKeys
            ]
        );
    }

    #[test]
    fn etcd_serves_its_pod_and_service_names() {
        let secrets = secrets(&names(), None, false);
        let s = find(&secrets, "c1-etcd-certs");
        for key in [ETCD_SERVER, ETCD_PEER] {
            let c = cert(s, key);
            assert_eq!(c.authority, CertificateAuthority::Etcd);
            for san in [
                "c1-etcd-0",
                "c1-etcd-0.c1-etcd.team-a.svc",
                "c1-etcd-0.c1-etcd.team-a.svc.cluster.local",
                "c1-etcd",
                "c1-etcd.team-a.svc",
                "localhost",
                "127.0.0.1",
            ] {
                assert!(
                    c.sans.iter().any(|s| s == san),
                    "{key}: {san} in {:?}",
                    c.sans
                );
            }
        }
        assert_eq!(cert(s, ETCD_PEER).usage, CertificateUsage::Peer);
        assert_eq!(s.materials, [SecretMaterial::EtcdCaCertificate]);
    }

    #[test]
    fn every_secret_and_key_is_named_for_the_cluster_and_a_dns_label() {
        for s in secrets(&names(), None, false) {
            assert!(s.name.starts_with("c1-"), "{}", s.name);
            for c in &s.certificates {
                assert!(
                    c.key.chars().all(|ch| ch.is_ascii_lowercase() || ch == '-'),
                    "{}",
                    c.key
                );
            }
        }
    }
}
