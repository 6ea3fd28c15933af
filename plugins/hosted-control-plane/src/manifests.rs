//! The control plane's objects, as the YAML manifests a hosted plan answers: the dedicated
//! etcd (a StatefulSet of one member and its headless Service), the API servers (a
//! Deployment and its Service) and the controller manager (a Deployment). Each is built as
//! JSON and written as one YAML document, named for the Cluster and in its namespace; the
//! certificates they mount are the Secrets of [`crate::certificates`], one directory each.
//! The images of the two Deployments carry the Kubernetes version, which is how the next plan
//! reads it back ([`crate::version`]).

use std::net::IpAddr;

use capw_sdk::types::{Endpoint, KubernetesVersion};
use serde_json::{Value, json};

use crate::certificates::{
    API_SERVER, API_SERVER_ETCD_CLIENT, API_SERVER_KUBELET_CLIENT, CONTROLLER_MANAGER,
    ETCD_MEMBERS, ETCD_PEER, ETCD_SERVER, FRONT_PROXY_CLIENT,
};
use crate::config::ApiServerService;
use crate::names::{
    API_SERVER_PORT, ETCD_CLIENT_PORT, ETCD_PEER_PORT, KUBE_APISERVER, KUBE_CONTROLLER_MANAGER,
    Names,
};

/// The etcd image of the dedicated datastore: the release Kubernetes 1.34 and 1.35 are built
/// and tested with.
pub const ETCD_IMAGE: &str = "registry.k8s.io/etcd:3.6.5-0";

/// Where the images of the Kubernetes components come from.
pub const KUBERNETES_REGISTRY: &str = "registry.k8s.io";

/// The workload cluster's Service range: `10.96.0.1`, the first address, is the `kubernetes`
/// Service's and one of the API servers' SANs.
pub const SERVICE_CLUSTER_IP_RANGE: &str = "10.96.0.0/12";

/// The port etcd serves `/livez`, `/readyz` and metrics on, without TLS.
const ETCD_METRICS_PORT: u16 = 2381;

/// The port kube-controller-manager serves `/healthz` on.
const CONTROLLER_MANAGER_PORT: u16 = 10257;

/// Where every workload mounts its certificate Secret.
const PKI: &str = "/etc/kubernetes/pki";

/// A Secret's files readable by their owner only (0400): keys are in them.
const SECRET_FILE_MODE: u32 = 0o400;

/// The size of the dedicated etcd's volume.
const ETCD_STORAGE: &str = "1Gi";

/// Everything the objects are made from.
#[derive(Debug, Clone)]
pub struct ControlPlane<'a> {
    /// Their names and namespace.
    pub names: &'a Names,
    /// The Kubernetes version of the API servers and the controller manager
    /// ([`crate::version::target`]).
    pub version: KubernetesVersion,
    /// API server replicas.
    pub api_server_replicas: u32,
    /// The type of the API servers' Service.
    pub service: ApiServerService,
    /// The state is kept in a shared datastore, reached as the Secret
    /// [`Names::datastore`] says, not in an etcd of the control plane's own.
    pub shared_datastore: bool,
    /// Where the API servers are reached from outside the management cluster, once known:
    /// the infrastructure's endpoint, else their load balancer's address. An IP address of it
    /// is what they advertise to the workload cluster.
    pub endpoint: Option<&'a Endpoint>,
}

impl ControlPlane<'_> {
    /// Whether the API servers wait for their endpoint: behind a load balancer whose address
    /// is not known yet (they advertise it, and their certificate names it).
    pub fn waits_for_endpoint(&self) -> bool {
        self.endpoint.is_none() && self.service == ApiServerService::LoadBalancer
    }
}

/// A manifest that could not be written as YAML.
#[derive(Debug, thiserror::Error)]
#[error("writing the manifest of {kind} {name} as YAML")]
pub struct ManifestError {
    /// Its kind.
    pub kind: String,
    /// Its name.
    pub name: String,
    /// What the writer said.
    #[source]
    pub source: serde_yaml_ng::Error,
}

/// Every object of the control plane, in the order the host is to apply them: what others
/// need first. While the API servers wait for their endpoint
/// ([`ControlPlane::waits_for_endpoint`]) their Deployment and the controller manager's are
/// left out.
pub fn objects(cp: &ControlPlane<'_>) -> Vec<Value> {
    let mut objects = if cp.shared_datastore {
        Vec::new()
    } else {
        vec![etcd_service(cp.names), etcd(cp.names)]
    };
    objects.push(api_server_service(cp));
    if !cp.waits_for_endpoint() {
        objects.extend([api_server(cp), controller_manager(cp)]);
    }
    objects
}

/// The images of `object`'s Pod template, init containers first, as the host tells them of
/// the object once applied (`hosted-object.images`); none for an object without one.
pub fn images(object: &Value) -> Vec<String> {
    let spec = object.pointer("/spec/template/spec");
    ["initContainers", "containers"]
        .iter()
        .filter_map(|list| spec?.get(*list)?.as_array())
        .flatten()
        .filter_map(|c| Some(c.get("image")?.as_str()?.to_owned()))
        .collect()
}

/// `objects` as YAML documents, one each.
///
/// # Errors
///
/// [`ManifestError`] for an object the YAML writer refuses, which a JSON value never is.
pub fn render(objects: &[Value]) -> Result<Vec<String>, ManifestError> {
    objects
        .iter()
        .map(|o| {
            serde_yaml_ng::to_string(o).map_err(|source| ManifestError {
                kind: text(o, "/kind"),
                name: text(o, "/metadata/name"),
                source,
            })
        })
        .collect()
}

fn text(object: &Value, pointer: &str) -> String {
    (object.pointer(pointer).and_then(Value::as_str))
        .unwrap_or_default()
        .to_owned()
}

/// The image of the Kubernetes component `component` at `version`.
pub fn kubernetes_image(component: &str, version: KubernetesVersion) -> String {
    format!("{KUBERNETES_REGISTRY}/{component}:{version}")
}

/// The labels that select one component's Pods.
fn selector(names: &Names, component: &str) -> Value {
    json!({
        "app.kubernetes.io/name": component,
        "app.kubernetes.io/instance": names.cluster(),
    })
}

/// A component's labels: its selector, and who made it.
fn labels(names: &Names, component: &str) -> Value {
    let mut labels = selector(names, component);
    if let Some(map) = labels.as_object_mut() {
        map.insert("app.kubernetes.io/component".into(), "control-plane".into());
        map.insert("app.kubernetes.io/managed-by".into(), "capw".into());
    }
    labels
}

fn metadata(names: &Names, name: String, component: &str) -> Value {
    json!({
        "name": name,
        "namespace": names.namespace(),
        "labels": labels(names, component),
    })
}

/// A volume of the Secret `secret`, readable by its owner only.
fn secret_volume(volume: &str, secret: String) -> Value {
    json!({
        "name": volume,
        "secret": {"secretName": secret, "defaultMode": SECRET_FILE_MODE},
    })
}

/// The file of `key` with `extension` under the mounted Secret.
fn pki(key: &str, extension: &str) -> String {
    format!("{PKI}/{key}.{extension}")
}

/// Spread a component's replicas over the management cluster's nodes where it can.
fn spread(names: &Names, component: &str) -> Value {
    json!([{
        "maxSkew": 1,
        "topologyKey": "kubernetes.io/hostname",
        "whenUnsatisfiable": "ScheduleAnyway",
        "labelSelector": {"matchLabels": selector(names, component)},
    }])
}

/// `POD_IP`, the Pod's own address, which every component listens on: the Pod's network is
/// its own, and a Pod listens where it is reached (the management cluster's Service routing
/// sends the Services' traffic there).
fn pod_ip_env() -> Value {
    json!({
        "name": "POD_IP",
        "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}},
    })
}

/// An HTTPS probe of `path` on `port`.
fn https_probe(path: &str, port: u16, period: u32, failures: u32) -> Value {
    json!({
        "httpGet": {"path": path, "port": port, "scheme": "HTTPS"},
        "periodSeconds": period,
        "timeoutSeconds": 5,
        "failureThreshold": failures,
    })
}

fn etcd_service(names: &Names) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": metadata(names, names.etcd(), "etcd"),
        "spec": {
            // Headless: each member is reached by its own name, and peers find each other
            // before they are ready.
            "clusterIP": "None",
            "publishNotReadyAddresses": true,
            "selector": selector(names, "etcd"),
            "ports": [
                {"name": "client", "port": ETCD_CLIENT_PORT, "targetPort": ETCD_CLIENT_PORT},
                {"name": "peer", "port": ETCD_PEER_PORT, "targetPort": ETCD_PEER_PORT},
            ],
        },
    })
}

fn etcd(names: &Names) -> Value {
    let service = names.etcd();
    let namespace = names.namespace();
    let peer_url = |host: &str| format!("https://{host}:{ETCD_PEER_PORT}");
    let initial_cluster = (0..ETCD_MEMBERS)
        .map(|i| {
            format!(
                "{}={}",
                names.etcd_pod(i),
                peer_url(&names.etcd_pod_host(i))
            )
        })
        .collect::<Vec<_>>()
        .join(",");
    let own_host = format!("$(POD_NAME).{service}.{namespace}.svc");
    let args = [
        "--name=$(POD_NAME)".to_owned(),
        "--data-dir=/var/lib/etcd".to_owned(),
        format!("--listen-client-urls=https://$(POD_IP):{ETCD_CLIENT_PORT}"),
        format!("--advertise-client-urls=https://{own_host}:{ETCD_CLIENT_PORT}"),
        format!("--listen-peer-urls=https://$(POD_IP):{ETCD_PEER_PORT}"),
        format!("--initial-advertise-peer-urls={}", peer_url(&own_host)),
        format!("--initial-cluster={initial_cluster}"),
        "--initial-cluster-state=new".to_owned(),
        format!("--initial-cluster-token={service}"),
        format!("--listen-metrics-urls=http://$(POD_IP):{ETCD_METRICS_PORT}"),
        "--client-cert-auth=true".to_owned(),
        format!("--trusted-ca-file={PKI}/etcd-ca.crt"),
        format!("--cert-file={}", pki(ETCD_SERVER, "crt")),
        format!("--key-file={}", pki(ETCD_SERVER, "key")),
        "--peer-client-cert-auth=true".to_owned(),
        format!("--peer-trusted-ca-file={PKI}/etcd-ca.crt"),
        format!("--peer-cert-file={}", pki(ETCD_PEER, "crt")),
        format!("--peer-key-file={}", pki(ETCD_PEER, "key")),
        "--snapshot-count=10000".to_owned(),
    ];
    let probe = |path: &str, period: u32, failures: u32| {
        json!({
            "httpGet": {"path": path, "port": ETCD_METRICS_PORT, "scheme": "HTTP"},
            "periodSeconds": period,
            "timeoutSeconds": 5,
            "failureThreshold": failures,
        })
    };
    json!({
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": metadata(names, names.etcd(), "etcd"),
        "spec": {
            "serviceName": service,
            "replicas": ETCD_MEMBERS,
            "podManagementPolicy": "Parallel",
            "selector": {"matchLabels": selector(names, "etcd")},
            // The data goes with the control plane, and stays while it only scales.
            "persistentVolumeClaimRetentionPolicy": {
                "whenDeleted": "Delete",
                "whenScaled": "Retain",
            },
            "template": {
                "metadata": {"labels": labels(names, "etcd")},
                "spec": {
                    "automountServiceAccountToken": false,
                    "enableServiceLinks": false,
                    "containers": [{
                        "name": "etcd",
                        "image": ETCD_IMAGE,
                        "command": ["etcd"],
                        "args": args,
                        "env": [
                            {
                                "name": "POD_NAME",
                                "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}},
                            },
                            pod_ip_env(),
                        ],
                        "ports": [
                            {"name": "client", "containerPort": ETCD_CLIENT_PORT},
                            {"name": "peer", "containerPort": ETCD_PEER_PORT},
                            {"name": "metrics", "containerPort": ETCD_METRICS_PORT},
                        ],
                        "startupProbe": probe("/readyz", 5, 60),
                        "readinessProbe": probe("/readyz", 5, 3),
                        "livenessProbe": probe("/livez", 10, 8),
                        "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}},
                        "volumeMounts": [
                            {"name": "data", "mountPath": "/var/lib/etcd"},
                            {"name": "certs", "mountPath": PKI, "readOnly": true},
                        ],
                    }],
                    "volumes": [secret_volume("certs", names.etcd_certs())],
                },
            },
            "volumeClaimTemplates": [{
                "metadata": {"name": "data"},
                "spec": {
                    "accessModes": ["ReadWriteOnce"],
                    "resources": {"requests": {"storage": ETCD_STORAGE}},
                },
            }],
        },
    })
}

fn api_server_service(cp: &ControlPlane<'_>) -> Value {
    let names = cp.names;
    let service_type = match cp.service {
        ApiServerService::LoadBalancer => "LoadBalancer",
        ApiServerService::ClusterIp => "ClusterIP",
    };
    json!({
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": metadata(names, names.api_server_service(), KUBE_APISERVER),
        "spec": {
            "type": service_type,
            "selector": selector(names, KUBE_APISERVER),
            "ports": [{
                "name": "https",
                "port": API_SERVER_PORT,
                "targetPort": API_SERVER_PORT,
            }],
        },
    })
}

/// What the API servers advertise to the workload cluster (the `kubernetes` Service's
/// endpoints): the infrastructure's endpoint when it is an IP address, the Pod's own address
/// otherwise.
fn advertise_address(endpoint: Option<&Endpoint>) -> String {
    match endpoint {
        Some(e) if e.host.parse::<IpAddr>().is_ok() => e.host.clone(),
        _ => "$(POD_IP)".into(),
    }
}

/// The API servers' flags: certificates from `<cluster>-apiserver-certs`, the dedicated etcd
/// over TLS, service-account tokens signed with the cluster's keys, the front proxy's
/// request headers.
pub fn api_server_args(cp: &ControlPlane<'_>) -> Vec<String> {
    let etcd = if cp.shared_datastore {
        // The prefix and the user are the host's; compaction is the shared etcd's own (its
        // compaction key lies outside every cluster's prefix).
        vec![
            "--etcd-servers=$(ETCD_SERVERS)".to_owned(),
            "--etcd-prefix=$(ETCD_PREFIX)".into(),
            format!("--etcd-cafile={DATASTORE}/ca.crt"),
            format!("--etcd-certfile={DATASTORE}/client.crt"),
            format!("--etcd-keyfile={DATASTORE}/client.key"),
            "--etcd-compaction-interval=0".into(),
        ]
    } else {
        vec![
            format!("--etcd-servers={}", cp.names.etcd_url()),
            format!("--etcd-cafile={PKI}/etcd-ca.crt"),
            format!("--etcd-certfile={}", pki(API_SERVER_ETCD_CLIENT, "crt")),
            format!("--etcd-keyfile={}", pki(API_SERVER_ETCD_CLIENT, "key")),
        ]
    };
    let mut args = vec![
        format!("--advertise-address={}", advertise_address(cp.endpoint)),
        "--bind-address=$(POD_IP)".into(),
        format!("--secure-port={API_SERVER_PORT}"),
        "--allow-privileged=true".into(),
        "--authorization-mode=Node,RBAC".into(),
        "--enable-admission-plugins=NodeRestriction".into(),
        "--enable-bootstrap-token-auth=true".into(),
        format!("--client-ca-file={PKI}/ca.crt"),
        format!("--tls-cert-file={}", pki(API_SERVER, "crt")),
        format!("--tls-private-key-file={}", pki(API_SERVER, "key")),
        format!(
            "--kubelet-client-certificate={}",
            pki(API_SERVER_KUBELET_CLIENT, "crt")
        ),
        format!(
            "--kubelet-client-key={}",
            pki(API_SERVER_KUBELET_CLIENT, "key")
        ),
        "--kubelet-preferred-address-types=InternalIP,ExternalIP,Hostname".into(),
        format!(
            "--proxy-client-cert-file={}",
            pki(FRONT_PROXY_CLIENT, "crt")
        ),
        format!("--proxy-client-key-file={}", pki(FRONT_PROXY_CLIENT, "key")),
        format!("--requestheader-client-ca-file={PKI}/front-proxy-ca.crt"),
        "--requestheader-allowed-names=front-proxy-client".into(),
        "--requestheader-extra-headers-prefix=X-Remote-Extra-".into(),
        "--requestheader-group-headers=X-Remote-Group".into(),
        "--requestheader-username-headers=X-Remote-User".into(),
        "--service-account-issuer=https://kubernetes.default.svc.cluster.local".into(),
        format!("--service-account-key-file={PKI}/sa.pub"),
        format!("--service-account-signing-key-file={PKI}/sa.key"),
        format!("--service-cluster-ip-range={SERVICE_CLUSTER_IP_RANGE}"),
    ];
    args.extend(etcd);
    args
}

/// Where the API servers find their access to a shared datastore.
const DATASTORE: &str = "/etc/kubernetes/datastore";

/// The API server container's environment: its Pod's address and, with a shared datastore,
/// the endpoints and prefix the host wrote.
fn api_server_env(cp: &ControlPlane<'_>) -> Value {
    let mut env = vec![pod_ip_env()];
    if cp.shared_datastore {
        for (name, key) in [("ETCD_SERVERS", "endpoints"), ("ETCD_PREFIX", "prefix")] {
            env.push(json!({
                "name": name,
                "valueFrom": {"secretKeyRef": {"name": cp.names.datastore(), "key": key}},
            }));
        }
    }
    Value::Array(env)
}

/// The API server container's volume mounts and the Pod's volumes.
fn api_server_volumes(cp: &ControlPlane<'_>) -> (Value, Value) {
    let mut mounts = vec![json!({"name": "certs", "mountPath": PKI, "readOnly": true})];
    let mut volumes = vec![secret_volume("certs", cp.names.api_server_certs())];
    if cp.shared_datastore {
        mounts.push(json!({"name": "datastore", "mountPath": DATASTORE, "readOnly": true}));
        volumes.push(secret_volume("datastore", cp.names.datastore()));
    }
    (Value::Array(mounts), Value::Array(volumes))
}

fn api_server(cp: &ControlPlane<'_>) -> Value {
    let names = cp.names;
    let (mounts, volumes) = api_server_volumes(cp);
    json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": metadata(names, names.api_server(), KUBE_APISERVER),
        "spec": {
            "replicas": cp.api_server_replicas,
            "selector": {"matchLabels": selector(names, KUBE_APISERVER)},
            // A new API server serves before an old one goes: an upgrade never leaves the
            // cluster without one.
            "strategy": {
                "type": "RollingUpdate",
                "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0},
            },
            "template": {
                "metadata": {"labels": labels(names, KUBE_APISERVER)},
                "spec": {
                    "automountServiceAccountToken": false,
                    "enableServiceLinks": false,
                    "topologySpreadConstraints": spread(names, KUBE_APISERVER),
                    "containers": [{
                        "name": KUBE_APISERVER,
                        "image": kubernetes_image(KUBE_APISERVER, cp.version),
                        "command": [KUBE_APISERVER],
                        "args": api_server_args(cp),
                        "env": api_server_env(cp),
                        "ports": [{"name": "https", "containerPort": API_SERVER_PORT}],
                        "startupProbe": https_probe("/livez", API_SERVER_PORT, 5, 60),
                        "readinessProbe": https_probe("/readyz", API_SERVER_PORT, 5, 3),
                        "livenessProbe": https_probe("/livez", API_SERVER_PORT, 10, 8),
                        "resources": {"requests": {"cpu": "250m", "memory": "256Mi"}},
                        "volumeMounts": mounts,
                    }],
                    "volumes": volumes,
                },
            },
        },
    })
}

/// The controller manager's flags: its kubeconfig and the cluster CA (with its key, to sign
/// kubelets' certificates) from `<cluster>-controller-manager-certs`, a controller of each
/// kind on its own service account, and the controllers that kubeadm-style joins with
/// bootstrap tokens need.
pub fn controller_manager_args(cp: &ControlPlane<'_>) -> Vec<String> {
    let kubeconfig = pki(CONTROLLER_MANAGER, "conf");
    vec![
        format!("--kubeconfig={kubeconfig}"),
        "--bind-address=$(POD_IP)".into(),
        format!("--authentication-kubeconfig={kubeconfig}"),
        format!("--authorization-kubeconfig={kubeconfig}"),
        format!("--client-ca-file={PKI}/ca.crt"),
        format!("--root-ca-file={PKI}/ca.crt"),
        format!("--cluster-name={}", cp.names.cluster()),
        format!("--cluster-signing-cert-file={PKI}/ca.crt"),
        format!("--cluster-signing-key-file={PKI}/ca.key"),
        format!("--service-account-private-key-file={PKI}/sa.key"),
        format!("--service-cluster-ip-range={SERVICE_CLUSTER_IP_RANGE}"),
        "--use-service-account-credentials=true".into(),
        "--controllers=*,bootstrapsigner,tokencleaner".into(),
        "--leader-elect=true".into(),
    ]
}

fn controller_manager(cp: &ControlPlane<'_>) -> Value {
    let names = cp.names;
    let component = KUBE_CONTROLLER_MANAGER;
    json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": metadata(names, names.controller_manager(), component),
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": selector(names, component)},
            "template": {
                "metadata": {"labels": labels(names, component)},
                "spec": {
                    "automountServiceAccountToken": false,
                    "enableServiceLinks": false,
                    "containers": [{
                        "name": component,
                        "image": kubernetes_image(component, cp.version),
                        "command": [component],
                        "args": controller_manager_args(cp),
                        "env": [pod_ip_env()],
                        "ports": [{"name": "https", "containerPort": CONTROLLER_MANAGER_PORT}],
                        "readinessProbe": https_probe("/healthz", CONTROLLER_MANAGER_PORT, 10, 3),
                        "livenessProbe": https_probe("/healthz", CONTROLLER_MANAGER_PORT, 10, 8),
                        "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}},
                        "volumeMounts": [{"name": "certs", "mountPath": PKI, "readOnly": true}],
                    }],
                    "volumes": [secret_volume("certs", names.controller_manager_certs())],
                },
            },
        },
    })
}

#[cfg(test)]
mod tests {
    use capw_sdk::testing::{cluster, version};

    use super::*;

    fn names() -> Names {
        Names::new(&cluster("team-a", "c1")).unwrap()
    }

    fn control_plane<'a>(names: &'a Names, endpoint: Option<&'a Endpoint>) -> ControlPlane<'a> {
        ControlPlane {
            names,
            version: version(35),
            api_server_replicas: 2,
            shared_datastore: false,
            service: ApiServerService::ClusterIp,
            endpoint,
        }
    }

    #[test]
    fn on_a_shared_datastore_there_is_no_etcd_and_the_api_servers_use_the_hosts_access() {
        let n = names();
        let cp = ControlPlane {
            shared_datastore: true,
            ..control_plane(&n, None)
        };
        let objects = objects(&cp);
        assert!(
            !objects
                .iter()
                .any(|o| o["kind"] == "StatefulSet" || o["metadata"]["name"] == "c1-etcd"),
            "an etcd of its own beside the shared one"
        );
        let deployment = find(&objects, "Deployment", "c1-kube-apiserver");
        let container = &deployment["spec"]["template"]["spec"]["containers"][0];
        let args: Vec<&str> = (container["args"].as_array().unwrap().iter())
            .filter_map(Value::as_str)
            .collect();
        for want in [
            "--etcd-servers=$(ETCD_SERVERS)",
            "--etcd-prefix=$(ETCD_PREFIX)",
            "--etcd-certfile=/etc/kubernetes/datastore/client.crt",
            "--etcd-compaction-interval=0",
        ] {
            assert!(args.contains(&want), "{want} not in {args:?}");
        }
        assert!(!args.iter().any(|a| a.contains("c1-etcd")), "{args:?}");
        let env = container["env"].to_string();
        assert!(
            env.contains(r#"{"key":"endpoints","name":"c1-datastore"}"#)
                && env.contains(r#"{"key":"prefix","name":"c1-datastore"}"#),
            "{env}"
        );
        let volumes = deployment["spec"]["template"]["spec"]["volumes"].to_string();
        assert!(
            volumes.contains(r#""secretName":"c1-datastore""#),
            "{volumes}"
        );
    }

    #[test]
    fn behind_a_load_balancer_the_api_servers_wait_for_its_address() {
        let n = names();
        let kinds = |cp: &ControlPlane<'_>| -> Vec<String> {
            (objects(cp).iter())
                .map(|o| format!("{} {}", o["kind"], o["metadata"]["name"]))
                .collect()
        };
        let waiting = ControlPlane {
            service: ApiServerService::LoadBalancer,
            ..control_plane(&n, None)
        };
        assert!(waiting.waits_for_endpoint());
        assert_eq!(
            kinds(&waiting),
            [
                r#""Service" "c1-etcd""#,
                r#""StatefulSet" "c1-etcd""#,
                r#""Service" "c1-apiserver""#
            ]
        );
        assert_eq!(
            find(&objects(&waiting), "Service", "c1-apiserver")["spec"]["type"],
            "LoadBalancer"
        );
        let address = Endpoint {
            host: "100.80.0.7".into(),
            port: 6443,
        };
        let given = ControlPlane {
            service: ApiServerService::LoadBalancer,
            ..control_plane(&n, Some(&address))
        };
        assert!(!given.waits_for_endpoint());
        assert_eq!(kinds(&given).len(), 5);
        assert_eq!(api_server_args(&given)[0], "--advertise-address=100.80.0.7");
        let cluster_ip = control_plane(&n, None);
        assert!(!cluster_ip.waits_for_endpoint());
        assert_eq!(
            find(&objects(&cluster_ip), "Service", "c1-apiserver")["spec"]["type"],
            "ClusterIP"
        );
    }

    #[test]
    fn every_component_listens_on_its_pods_address() {
        let n = names();
        let cp = control_plane(&n, None);
        let all = objects(&cp);
        for (kind, name) in [
            ("StatefulSet", "c1-etcd"),
            ("Deployment", "c1-kube-apiserver"),
            ("Deployment", "c1-kube-controller-manager"),
        ] {
            let container = &find(&all, kind, name)["spec"]["template"]["spec"]["containers"][0];
            assert!(
                (container["env"].as_array().unwrap().iter()).any(|e| e["name"] == "POD_IP"
                    && e["valueFrom"]["fieldRef"]["fieldPath"] == "status.podIP"),
                "{kind} {name}: {container}"
            );
            let args = container["args"].to_string();
            assert!(!args.contains("0.0.0.0"), "{kind} {name}: {args}");
            assert!(args.contains("$(POD_IP)"), "{kind} {name}: {args}");
        }
    }

    fn find<'a>(objects: &'a [Value], kind: &str, name: &str) -> &'a Value {
        (objects.iter())
            .find(|o| o["kind"] == kind && o["metadata"]["name"] == name)
            .unwrap_or_else(|| panic!("no {kind} {name}"))
    }

    #[test]
    fn the_api_server_advertises_an_ip_endpoint_and_its_pod_address_otherwise() {
        let n = names();
        let ip = Endpoint {
            host: "203.0.113.10".into(),
            port: 6443,
        };
        let dns = Endpoint {
            host: "cp.example.test".into(),
            port: 6443,
        };
        let first = |e| api_server_args(&control_plane(&n, e))[0].clone();
        assert_eq!(first(Some(&ip)), "--advertise-address=203.0.113.10");
        assert_eq!(first(Some(&dns)), "--advertise-address=$(POD_IP)");
        assert_eq!(first(None), "--advertise-address=$(POD_IP)");
    }

    #[test]
    fn the_api_server_reads_what_its_secret_holds() {
        let n = names();
        let args = api_server_args(&control_plane(&n, None));
        for expected in [
            "--etcd-servers=https://c1-etcd.team-a.svc:2379",
            "--etcd-certfile=/etc/kubernetes/pki/apiserver-etcd-client.crt",
            "--tls-cert-file=/etc/kubernetes/pki/apiserver.crt",
            "--service-account-key-file=/etc/kubernetes/pki/sa.pub",
            "--service-account-signing-key-file=/etc/kubernetes/pki/sa.key",
            "--requestheader-client-ca-file=/etc/kubernetes/pki/front-proxy-ca.crt",
            "--proxy-client-cert-file=/etc/kubernetes/pki/front-proxy-client.crt",
        ] {
            assert!(
                args.iter().any(|a| a == expected),
                "{expected} in {args:#?}"
            );
        }
        let objects = objects(&control_plane(&n, None));
        let d = find(&objects, "Deployment", "c1-kube-apiserver");
        let pod = &d["spec"]["template"]["spec"];
        assert_eq!(
            pod["volumes"][0]["secret"]["secretName"],
            "c1-apiserver-certs"
        );
        let probe = &pod["containers"][0]["readinessProbe"]["httpGet"];
        assert_eq!(
            (&probe["path"], &probe["port"], &probe["scheme"]),
            (&json!("/readyz"), &json!(6443), &json!("HTTPS"))
        );
        // The Service selects the API servers' Pods.
        let service = find(&objects, "Service", "c1-apiserver");
        let selector = service["spec"]["selector"].as_object().unwrap();
        let pod_labels = &d["spec"]["template"]["metadata"]["labels"];
        assert!(!selector.is_empty());
        for (k, v) in selector {
            assert_eq!(&pod_labels[k], v, "{k}");
        }
        assert_eq!(service["spec"]["ports"][0]["port"], 6443);
    }

    #[test]
    fn the_controller_manager_signs_with_the_cluster_ca_and_runs_the_token_controllers() {
        let n = names();
        let args = controller_manager_args(&control_plane(&n, None));
        for expected in [
            "--kubeconfig=/etc/kubernetes/pki/controller-manager.conf",
            "--cluster-signing-cert-file=/etc/kubernetes/pki/ca.crt",
            "--cluster-signing-key-file=/etc/kubernetes/pki/ca.key",
            "--use-service-account-credentials=true",
            "--controllers=*,bootstrapsigner,tokencleaner",
        ] {
            assert!(
                args.iter().any(|a| a == expected),
                "{expected} in {args:#?}"
            );
        }
        let objects = objects(&control_plane(&n, None));
        let d = find(&objects, "Deployment", "c1-kube-controller-manager");
        assert_eq!(d["spec"]["replicas"], 1);
        assert_eq!(
            d["spec"]["template"]["spec"]["volumes"][0]["secret"]["secretName"],
            "c1-controller-manager-certs"
        );
    }

    #[test]
    fn etcd_is_one_member_over_tls_behind_a_headless_service() {
        let n = names();
        let objects = objects(&control_plane(&n, None));
        let s = find(&objects, "StatefulSet", "c1-etcd");
        assert_eq!(s["spec"]["replicas"], 1);
        assert_eq!(s["spec"]["serviceName"], "c1-etcd");
        let container = &s["spec"]["template"]["spec"]["containers"][0];
        assert_eq!(container["image"], "registry.k8s.io/etcd:3.6.5-0");
        let args: Vec<&str> = (container["args"].as_array().unwrap().iter())
            .filter_map(Value::as_str)
            .collect();
        for expected in [
            "--client-cert-auth=true",
            "--cert-file=/etc/kubernetes/pki/etcd-server.crt",
            "--peer-cert-file=/etc/kubernetes/pki/etcd-peer.crt",
            "--initial-cluster=c1-etcd-0=https://c1-etcd-0.c1-etcd.team-a.svc:2380",
            "--advertise-client-urls=https://$(POD_NAME).c1-etcd.team-a.svc:2379",
        ] {
            assert!(args.contains(&expected), "{expected} in {args:#?}");
        }
        let service = find(&objects, "Service", "c1-etcd");
        assert_eq!(service["spec"]["clusterIP"], "None");
        assert_eq!(
            s["spec"]["template"]["spec"]["volumes"][0]["secret"]["secretName"],
            "c1-etcd-certs"
        );
    }

    #[test]
    fn the_deployments_images_carry_the_version_and_are_read_as_the_host_reads_them() {
        let n = names();
        let cp = ControlPlane {
            version: version(34),
            ..control_plane(&n, None)
        };
        let objects = objects(&cp);
        let told = |kind: &str, name: &str| images(find(&objects, kind, name));
        assert_eq!(
            told("Deployment", "c1-kube-apiserver"),
            ["registry.k8s.io/kube-apiserver:v1.34.0"]
        );
        assert_eq!(
            told("Deployment", "c1-kube-controller-manager"),
            ["registry.k8s.io/kube-controller-manager:v1.34.0"]
        );
        assert_eq!(told("StatefulSet", "c1-etcd"), [ETCD_IMAGE]);
        assert!(told("Service", "c1-apiserver").is_empty());
        // Init containers first, as the host tells them.
        let pod = json!({"spec": {"template": {"spec": {
            "containers": [{"name": "b", "image": "b:1"}],
            "initContainers": [{"name": "a", "image": "a:1"}],
        }}}});
        assert_eq!(images(&pod), ["a:1", "b:1"]);
    }
}
