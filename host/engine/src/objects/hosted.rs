//! A hosted control plane's objects in the management cluster (contract 0.3, the hosted
//! shape): the checks every object of a plan passes before anything of it is applied, how
//! ready each applied object is as the plan is told it, and the cluster's CAs the host makes
//! and mints the plan's certificate Secrets from, so that no CA key enters a sandbox.
//!
//! Every function here is pure (certificate minting draws random keys): the action
//! (`pass::actions::hosted`) reads and writes.

use std::collections::{BTreeMap, BTreeSet};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use capw_runtime::control_plane::{
    CertificateAuthority, CertificateRequest, CertificateSecret, CertificateUsage, SecretMaterial,
    SharedDatastore,
};
use serde_json::{Value, json};
use sha2::{Digest as _, Sha256};

use super::SecretItems;
use crate::store::management::{HOSTED_KINDS, ObjectRef};

/// The annotation holding the digest of an object as the plan answered it: an object whose
/// digest is unchanged is not applied again.
pub const APPLIED_DIGEST_ANNOTATION: &str = "capw.dev/applied-digest";

/// The cluster secrets' items of the CAs the host makes for a hosted control plane (kubeadm's
/// file names). `ca.crt` is also what workers' joins pin.
pub const CLUSTER_CA_CERT: &str = "ca.crt";
/// The cluster CA's key.
pub const CLUSTER_CA_KEY: &str = "ca.key";
/// The front-proxy CA.
pub const FRONT_PROXY_CA_CERT: &str = "front-proxy-ca.crt";
/// The front-proxy CA's key.
pub const FRONT_PROXY_CA_KEY: &str = "front-proxy-ca.key";
/// The etcd CA.
pub const ETCD_CA_CERT: &str = "etcd/ca.crt";
/// The etcd CA's key.
pub const ETCD_CA_KEY: &str = "etcd/ca.key";
/// The service-account signing key.
pub const SA_KEY: &str = "sa.key";
/// Its public half.
pub const SA_PUB: &str = "sa.pub";

const CA_ITEMS: [&str; 8] = [
    CLUSTER_CA_CERT,
    CLUSTER_CA_KEY,
    FRONT_PROXY_CA_CERT,
    FRONT_PROXY_CA_KEY,
    ETCD_CA_CERT,
    ETCD_CA_KEY,
    SA_KEY,
    SA_PUB,
];

/// How long the host's CAs are valid (kubeadm's ten years).
const CA_DAYS: u64 = 3650;
/// How long a minted certificate is valid by default (kubeadm's one year); the host renews it
/// at two thirds of that ([`renew_after`]).
pub const CERTIFICATE_VALIDITY: std::time::Duration =
    std::time::Duration::from_secs(365 * 24 * 60 * 60);

/// When the host makes the certificates of an applied Secret (or a stored kubeconfig) anew:
/// an RFC 3339 time, two thirds into their validity. A Secret without it, minted before the
/// host renewed certificates, is renewed at the next pass.
pub const RENEW_AFTER_ANNOTATION: &str = "capw.dev/renew-after";

/// The pod-template annotation through which a Deployment or StatefulSet rolls when a
/// certificate Secret it mounts is renewed: each such Secret's name and renewal time.
pub const CERTIFICATES_ANNOTATION: &str = "capw.dev/certificates";

/// The time certificates minted `now`, valid for `validity`, are renewed: two thirds in, as
/// kubelets rotate theirs (cert-manager's default too).
pub fn renew_after(now: jiff::Timestamp, validity: std::time::Duration) -> jiff::Timestamp {
    let in_two_thirds = jiff::SignedDuration::try_from((validity / 3).saturating_mul(2))
        .unwrap_or(jiff::SignedDuration::MAX);
    now.checked_add(in_two_thirds)
        .unwrap_or(jiff::Timestamp::MAX)
}

/// The renewal time an applied object carries, if it carries a readable one.
pub fn renewal_time(object: &Value) -> Option<jiff::Timestamp> {
    object
        .pointer("/metadata/annotations")?
        .get(RENEW_AFTER_ANNOTATION)?
        .as_str()?
        .parse()
        .ok()
}

/// Whether the certificates of an applied object are due for renewal at `now`: its renewal
/// time has come, or it carries none.
pub fn renewal_due(object: &Value, now: jiff::Timestamp) -> bool {
    renewal_time(object).is_none_or(|at| at <= now)
}

/// `object` annotated to be renewed at `at`.
pub fn with_renewal(mut object: Value, at: jiff::Timestamp) -> Value {
    let metadata = &mut object["metadata"];
    if !metadata["annotations"].is_object() {
        metadata["annotations"] = json!({});
    }
    metadata["annotations"][RENEW_AFTER_ANNOTATION] = Value::String(at.to_string());
    object
}

/// Marks the pod template of a Deployment or StatefulSet `object` with the renewal times of
/// the Secrets among `renewals` (name → time) its volumes mount, so that renewing one rolls
/// its Pods onto the new certificates: a process reads its certificate files when it starts.
/// Other objects, and templates that mount none of them, are left as they are.
pub fn roll_on_renewal(object: &mut Value, renewals: &BTreeMap<String, String>) {
    if !matches!(
        object.get("kind").and_then(Value::as_str),
        Some("Deployment" | "StatefulSet")
    ) {
        return;
    }
    let Some(template) = object.pointer_mut("/spec/template") else {
        return;
    };
    let mounted: BTreeSet<String> = template
        .pointer("/spec/volumes")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .flat_map(|v| {
            let direct = v.pointer("/secret/secretName").and_then(Value::as_str);
            let projected = v
                .pointer("/projected/sources")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|s| s.pointer("/secret/name").and_then(Value::as_str));
            direct.into_iter().chain(projected).map(str::to_owned)
        })
        .collect();
    let stamps: Vec<String> = renewals
        .iter()
        .filter(|(name, _)| mounted.contains(*name))
        .map(|(name, at)| format!("{name}={at}"))
        .collect();
    if stamps.is_empty() {
        return;
    }
    if !template["metadata"].is_object() {
        template["metadata"] = json!({});
    }
    if !template["metadata"]["annotations"].is_object() {
        template["metadata"]["annotations"] = json!({});
    }
    template["metadata"]["annotations"][CERTIFICATES_ANNOTATION] = Value::String(stamps.join(","));
}

/// Checks every manifest of a hosted plan and reads it as JSON, in the Cluster's namespace.
///
/// An object is refused, and with it the whole answer, when it is not YAML of one object,
/// not one of [`HOSTED_KINDS`], in another namespace than `namespace`, not named with
/// `cluster` and a dash first, or named twice; `certificates` are Secrets of the plan too,
/// checked for their names the same way.
///
/// # Errors
///
/// What is wrong, naming the object by its place in the answer, its kind and name; never its
/// content.
pub fn check_plan_objects(
    manifests: &[String],
    certificates: &[CertificateSecret],
    namespace: &str,
    cluster: &str,
) -> Result<Vec<Value>, String> {
    let prefix = format!("{cluster}-");
    let allowed = || "apps/v1 Deployment or StatefulSet, v1 Service, Secret or ConfigMap (contract 0.3, the hosted shape)";
    let mut seen = BTreeSet::new();
    let mut objects = Vec::with_capacity(manifests.len());
    for (i, manifest) in manifests.iter().enumerate() {
        let at = format!("apply-manifests[{i}]");
        let mut value = capw_api::parse_document(manifest).map_err(|e| format!("{at}: {e}"))?;
        let (Some(api_version), Some(kind)) = (
            value.get("apiVersion").and_then(Value::as_str),
            value.get("kind").and_then(Value::as_str),
        ) else {
            return Err(format!(
                "{at}: not an object: `apiVersion` and `kind` are required"
            ));
        };
        let name = value.pointer("/metadata/name").and_then(Value::as_str);
        let what = format!(
            "{at} ({api_version} {kind} {})",
            name.unwrap_or("without a name")
        );
        if !HOSTED_KINDS.contains(&(api_version, kind)) {
            return Err(format!(
                "{what}: not a kind a hosted control plane may apply: {}",
                allowed()
            ));
        }
        let Some(name) = name else {
            return Err(format!("{what}: metadata.name is required"));
        };
        if !name.starts_with(&prefix) {
            return Err(format!(
                "{what}: metadata.name must start with the Cluster's name and a dash ({prefix})"
            ));
        }
        if let Some(problem) = capw_api::names::subdomain_problem(name, capw_api::names::MAX_NAME) {
            return Err(format!("{what}: metadata.name {problem}"));
        }
        match value.pointer("/metadata/namespace") {
            None | Some(Value::Null) => {}
            Some(Value::String(ns)) if ns == namespace => {}
            Some(other) => {
                return Err(format!(
                    "{what}: metadata.namespace is {other}; a hosted control plane's objects \
                     live in the Cluster's namespace {namespace:?}"
                ));
            }
        }
        let reference = ObjectRef {
            api_version: api_version.to_owned(),
            kind: kind.to_owned(),
            name: name.to_owned(),
        };
        if !seen.insert(reference) {
            return Err(format!("{what}: named twice in the answer"));
        }
        value["metadata"]["namespace"] = Value::String(namespace.to_owned());
        objects.push(value);
    }
    for (i, secret) in certificates.iter().enumerate() {
        let what = format!("certificates[{i}] (v1 Secret {})", secret.name);
        check_secret_name(&what, &secret.name, &prefix)?;
        if !seen.insert(secret_ref(&secret.name)) {
            return Err(format!("{what}: named twice in the answer"));
        }
        let mut keys = BTreeSet::new();
        for (j, c) in secret.certificates.iter().enumerate() {
            if let Some(problem) = capw_api::names::label_problem(&c.key) {
                return Err(format!("{what}: certificates[{j}].key {problem}"));
            }
            if !keys.insert(c.key.as_str()) {
                return Err(format!(
                    "{what}: certificates[{j}].key {:?} is named twice",
                    c.key
                ));
            }
        }
    }
    Ok(objects)
}

/// What is wrong with a plan's `shared-datastore` beside its checked `objects` and
/// `certificates`: the Secret it names breaks the rule every object of the plan follows, or is
/// named by another of its objects; the datastore's name is not a Secret's.
pub fn check_shared_datastore(
    datastore: &SharedDatastore,
    objects: &[Value],
    certificates: &[CertificateSecret],
    cluster: &str,
) -> Result<(), String> {
    let what = format!("shared-datastore (v1 Secret {})", datastore.secret);
    check_secret_name(&what, &datastore.secret, &format!("{cluster}-"))?;
    let named = secret_ref(&datastore.secret);
    if objects.iter().filter_map(ObjectRef::of).any(|r| r == named)
        || certificates.iter().any(|c| c.name == datastore.secret)
    {
        return Err(format!("{what}: named twice in the answer"));
    }
    if let Some(problem) =
        capw_api::names::subdomain_problem(&datastore.name, capw_api::names::MAX_NAME)
    {
        return Err(format!(
            "shared-datastore.name {:?}: the name of a Secret {problem}",
            datastore.name
        ));
    }
    Ok(())
}

/// What is wrong with the name of a Secret the host writes for a hosted plan (`what`): it
/// must start with `prefix` (the Cluster's name and a dash) and be a Secret's name.
fn check_secret_name(what: &str, name: &str, prefix: &str) -> Result<(), String> {
    if !name.starts_with(prefix) {
        return Err(format!(
            "{what}: the name must start with the Cluster's name and a dash ({prefix})"
        ));
    }
    match capw_api::names::subdomain_problem(name, capw_api::names::MAX_NAME) {
        Some(problem) => Err(format!("{what}: the name {problem}")),
        None => Ok(()),
    }
}

/// The type of the Secret an operator describes a shared datastore with.
pub const DATASTORE_SECRET_TYPE: &str = "capw.dev/datastore";

/// The annotation naming the shared datastore on the Secret its access is written into, so
/// that the Cluster's deletion removes the cluster's user and keys there.
pub const DATASTORE_ANNOTATION: &str = "capw.dev/datastore";

/// A shared datastore as its Secret (type [`DATASTORE_SECRET_TYPE`]) describes it: `endpoints`
/// (comma-separated client URLs), `ca.crt` and `ca.key` (its CA, which the host signs the
/// clusters' client certificates with), `username` (a user with the root role; `root` when
/// left out) and `password`. `Debug` shows the endpoints alone.
pub struct SharedDatastoreSecret {
    pub name: String,
    pub endpoints: String,
    pub ca_certificate: String,
    pub ca_key: String,
    pub username: String,
    pub password: String,
}

impl std::fmt::Debug for SharedDatastoreSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedDatastoreSecret")
            .field("name", &self.name)
            .field("endpoints", &self.endpoints)
            .finish_non_exhaustive()
    }
}

impl SharedDatastoreSecret {
    /// The datastore described by the Secret `object`, or what is wrong with it (its type, a
    /// missing key), never quoting its data.
    pub fn from_secret(object: &Value) -> Result<Self, String> {
        let name = object
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let kind = object
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or("Opaque");
        if kind != DATASTORE_SECRET_TYPE {
            return Err(format!(
                "the Secret {name} is of type {kind}, not {DATASTORE_SECRET_TYPE}"
            ));
        }
        let item = |key: &str| -> Result<Option<String>, String> {
            let Some(value) = object
                .pointer(&format!("/data/{key}"))
                .and_then(Value::as_str)
            else {
                return Ok(None);
            };
            let bytes = STANDARD
                .decode(value)
                .map_err(|_| format!("the Secret {name}'s {key} is not base64"))?;
            String::from_utf8(bytes)
                .map(Some)
                .map_err(|_| format!("the Secret {name}'s {key} is not text"))
        };
        let required = |key: &str| -> Result<String, String> {
            item(key)?.ok_or_else(|| format!("the Secret {name} has no {key}"))
        };
        Ok(Self {
            endpoints: required("endpoints")?,
            ca_certificate: required("ca.crt")?,
            ca_key: required("ca.key")?,
            username: item("username")?.unwrap_or_else(|| "root".into()),
            password: required("password")?,
            name,
        })
    }

    /// What the Secret of a cluster's access depends on, digested: it is written again when
    /// any of it changes.
    pub fn access_digest(&self, user: &str, prefix: &str, secret: &str) -> String {
        digest(&json!({
            "datastore": self.name,
            "endpoints": self.endpoints,
            "ca": digest(&self.ca_certificate),
            "user": user,
            "prefix": prefix,
            "secret": secret,
        }))
    }
}

/// The Secret `name` in `namespace` that holds a cluster's access to the shared datastore
/// `datastore`, annotated with it.
pub fn datastore_access_secret(
    name: &str,
    namespace: &str,
    datastore: &str,
    access: &capw_workload::DatastoreAccess,
) -> Value {
    let b64 = |s: &str| STANDARD.encode(s);
    json!({
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "annotations": {DATASTORE_ANNOTATION: datastore},
        },
        "type": "Opaque",
        "data": {
            "endpoints": b64(&access.endpoints),
            "prefix": b64(&access.prefix),
            "ca.crt": b64(&access.ca_certificate),
            "client.crt": b64(&access.client_certificate),
            "client.key": b64(&access.client_key),
        },
    })
}

/// The reference of the Secret named `name`.
pub fn secret_ref(name: &str) -> ObjectRef {
    ObjectRef {
        api_version: "v1".into(),
        kind: "Secret".into(),
        name: name.into(),
    }
}

/// The digest of an object as answered (or a certificate Secret's request): what
/// [`APPLIED_DIGEST_ANNOTATION`] holds once it is applied.
pub fn digest(value: &impl serde::Serialize) -> String {
    let bytes = serde_json::to_vec(value).unwrap_or_default();
    hex::encode(Sha256::digest(&bytes))
}

/// `object` with its digest annotation, ready to apply.
pub fn annotated(mut object: Value, digest: &str) -> Value {
    let metadata = &mut object["metadata"];
    if !metadata["annotations"].is_object() {
        metadata["annotations"] = json!({});
    }
    metadata["annotations"][APPLIED_DIGEST_ANNOTATION] = Value::String(digest.to_owned());
    object
}

/// The digest an applied object carries, if any.
pub fn applied_digest(object: &Value) -> Option<&str> {
    object
        .pointer("/metadata/annotations")?
        .get(APPLIED_DIGEST_ANNOTATION)?
        .as_str()
}

/// Whether an applied object is ready, and why not: a Deployment or StatefulSet once its
/// controller observed its generation and every desired replica is updated and ready
/// (available); a LoadBalancer Service once its load balancer gave it an address; any other
/// kind once it exists.
pub fn readiness(object: &Value) -> (bool, Option<String>) {
    let kind = object.get("kind").and_then(Value::as_str).unwrap_or("");
    if kind == "Service" && is_load_balancer(object) {
        return if load_balancer_addresses(object).is_empty() {
            (
                false,
                Some("its load balancer has no address yet".to_owned()),
            )
        } else {
            (true, None)
        };
    }
    if kind != "Deployment" && kind != "StatefulSet" {
        return (true, None);
    }
    let number = |pointer: &str| object.pointer(pointer).and_then(Value::as_i64);
    let want = number("/spec/replicas").unwrap_or(1);
    let generation = number("/metadata/generation").unwrap_or(0);
    let observed = number("/status/observedGeneration").unwrap_or(0);
    if observed < generation {
        return (
            false,
            Some(format!(
                "its controller has not observed generation {generation} yet"
            )),
        );
    }
    let updated = number("/status/updatedReplicas").unwrap_or(0);
    let (ready, word) = if kind == "Deployment" {
        (
            number("/status/availableReplicas").unwrap_or(0),
            "available",
        )
    } else {
        (number("/status/readyReplicas").unwrap_or(0), "ready")
    };
    let total = number("/status/replicas").unwrap_or(0);
    if updated >= want && ready >= want && total <= want {
        (true, None)
    } else {
        (
            false,
            Some(format!(
                "{ready}/{want} {word}, {updated}/{want} updated, {total} in all"
            )),
        )
    }
}

/// Whether `object` is a Service of type LoadBalancer.
fn is_load_balancer(object: &Value) -> bool {
    object.get("kind").and_then(Value::as_str) == Some("Service")
        && object.pointer("/spec/type").and_then(Value::as_str) == Some("LoadBalancer")
}

/// A LoadBalancer Service's addresses, as its load balancer gave them
/// (`status.loadBalancer.ingress`, each its IP, else its hostname), in their order; empty for
/// any other object.
pub fn load_balancer_addresses(object: &Value) -> Vec<String> {
    if !is_load_balancer(object) {
        return Vec::new();
    }
    (object
        .pointer("/status/loadBalancer/ingress")
        .and_then(Value::as_array))
    .into_iter()
    .flatten()
    .filter_map(|i| {
        (i.get("ip").or_else(|| i.get("hostname")))
            .and_then(Value::as_str)
            .filter(|a| !a.is_empty())
            .map(str::to_owned)
    })
    .collect()
}

/// A certificate authority as PEM.
struct Ca {
    cert: String,
    key: String,
}

impl Ca {
    fn issuer(&self) -> Result<rcgen::Issuer<'static, rcgen::KeyPair>, String> {
        let key = rcgen::KeyPair::from_pem(&self.key)
            .map_err(|_| "a CA key of the cluster's secrets does not parse".to_string())?;
        rcgen::Issuer::from_ca_cert_pem(&self.cert, key)
            .map_err(|_| "a CA certificate of the cluster's secrets does not parse".to_string())
    }
}

/// The cluster's CAs and service-account key pair, as the host keeps them with the cluster's
/// secrets.
pub struct ClusterCas {
    cluster: Ca,
    front_proxy: Ca,
    etcd: Ca,
    sa_key: String,
    sa_pub: String,
    /// How long the certificates it mints are valid.
    validity: std::time::Duration,
}

impl ClusterCas {
    /// The same CAs minting certificates valid for `validity`.
    #[must_use]
    pub fn with_validity(mut self, validity: std::time::Duration) -> Self {
        self.validity = validity;
        self
    }

    /// How long the certificates it mints are valid.
    pub fn validity(&self) -> std::time::Duration {
        self.validity
    }

    /// New CAs for cluster `cluster`, as the items the cluster's secrets keep.
    ///
    /// # Errors
    ///
    /// When the key generator fails.
    pub fn generate(cluster: &str) -> Result<SecretItems, String> {
        let ca = |cn: &str| -> Result<Ca, String> {
            let key = new_key()?;
            let mut params = rcgen::CertificateParams::default();
            params
                .distinguished_name
                .push(rcgen::DnType::CommonName, cn.to_owned());
            params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
            params.key_usages = vec![
                rcgen::KeyUsagePurpose::KeyCertSign,
                rcgen::KeyUsagePurpose::CrlSign,
                rcgen::KeyUsagePurpose::DigitalSignature,
            ];
            validity(
                &mut params,
                std::time::Duration::from_secs(CA_DAYS * 24 * 60 * 60),
            );
            let cert = params
                .self_signed(&key)
                .map_err(|e| format!("a CA certificate for {cluster}: {e}"))?;
            Ok(Ca {
                cert: cert.pem(),
                key: key.serialize_pem(),
            })
        };
        let cluster_ca = ca("kubernetes")?;
        let front_proxy = ca("front-proxy-ca")?;
        let etcd = ca("etcd-ca")?;
        let sa = new_key()?;
        Ok(vec![
            (CLUSTER_CA_CERT.into(), cluster_ca.cert.into_bytes()),
            (CLUSTER_CA_KEY.into(), cluster_ca.key.into_bytes()),
            (FRONT_PROXY_CA_CERT.into(), front_proxy.cert.into_bytes()),
            (FRONT_PROXY_CA_KEY.into(), front_proxy.key.into_bytes()),
            (ETCD_CA_CERT.into(), etcd.cert.into_bytes()),
            (ETCD_CA_KEY.into(), etcd.key.into_bytes()),
            (SA_KEY.into(), sa.serialize_pem().into_bytes()),
            (SA_PUB.into(), sa.public_key_pem().into_bytes()),
        ])
    }

    /// The CAs among a cluster's secrets; `None` when any is missing.
    pub fn from_items(items: &SecretItems) -> Option<ClusterCas> {
        let item = |name: &str| {
            items
                .iter()
                .find(|(n, _)| n == name)
                .and_then(|(_, v)| String::from_utf8(v.clone()).ok())
        };
        if CA_ITEMS.iter().any(|name| item(name).is_none()) {
            return None;
        }
        Some(ClusterCas {
            cluster: Ca {
                cert: item(CLUSTER_CA_CERT)?,
                key: item(CLUSTER_CA_KEY)?,
            },
            front_proxy: Ca {
                cert: item(FRONT_PROXY_CA_CERT)?,
                key: item(FRONT_PROXY_CA_KEY)?,
            },
            etcd: Ca {
                cert: item(ETCD_CA_CERT)?,
                key: item(ETCD_CA_KEY)?,
            },
            sa_key: item(SA_KEY)?,
            sa_pub: item(SA_PUB)?,
            validity: CERTIFICATE_VALIDITY,
        })
    }

    /// The digest a certificate Secret's request is applied under: the request and the CAs'
    /// certificates, so new CAs mint it again.
    pub fn request_digest(&self, secret: &CertificateSecret) -> String {
        digest(&(
            secret,
            &self.cluster.cert,
            &self.front_proxy.cert,
            &self.etcd.cert,
        ))
    }

    /// The Secret `secret` asks for, in `namespace`, minted now: each certificate and its key
    /// (and kubeconfig), each material.
    ///
    /// # Errors
    ///
    /// A SAN that is neither a DNS name nor an IP address, or a CA that does not sign.
    pub fn mint(&self, secret: &CertificateSecret, namespace: &str) -> Result<Value, String> {
        let mut data = serde_json::Map::new();
        let mut put = |key: String, value: &str| {
            data.insert(key, Value::String(STANDARD.encode(value)));
        };
        for (j, request) in secret.certificates.iter().enumerate() {
            let (cert, key) = self
                .certificate(request)
                .map_err(|e| format!("certificates[{j}] ({}): {e}", request.key))?;
            if let Some(server) = &request.kubeconfig_server {
                let user = &request.common_name;
                put(
                    format!("{}.conf", request.key),
                    &kubeconfig(server, &self.cluster.cert, user, &cert, &key),
                );
            }
            put(format!("{}.crt", request.key), &cert);
            put(format!("{}.key", request.key), &key);
        }
        for material in &secret.materials {
            match material {
                SecretMaterial::ClusterCaCertificate => put("ca.crt".into(), &self.cluster.cert),
                SecretMaterial::ClusterCa => {
                    put("ca.crt".into(), &self.cluster.cert);
                    put("ca.key".into(), &self.cluster.key);
                }
                SecretMaterial::FrontProxyCaCertificate => {
                    put("front-proxy-ca.crt".into(), &self.front_proxy.cert);
                }
                SecretMaterial::EtcdCaCertificate => put("etcd-ca.crt".into(), &self.etcd.cert),
                SecretMaterial::ServiceAccountKeys => {
                    put("sa.key".into(), &self.sa_key);
                    put("sa.pub".into(), &self.sa_pub);
                }
            }
        }
        Ok(json!({
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": secret.name, "namespace": namespace},
            "type": "Opaque",
            "data": data,
        }))
    }

    /// One certificate and its key (PEM), signed by the CA the request names.
    fn certificate(&self, request: &CertificateRequest) -> Result<(String, String), String> {
        let ca = match request.authority {
            CertificateAuthority::Cluster => &self.cluster,
            CertificateAuthority::FrontProxy => &self.front_proxy,
            CertificateAuthority::Etcd => &self.etcd,
        };
        let issuer = ca.issuer()?;
        let key = new_key()?;
        let mut params = rcgen::CertificateParams::default();
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, request.common_name.clone());
        for o in &request.organizations {
            params
                .distinguished_name
                .push(rcgen::DnType::OrganizationName, o.clone());
        }
        for san in &request.sans {
            let name =
                match san.parse::<std::net::IpAddr>() {
                    Ok(ip) => rcgen::SanType::IpAddress(ip),
                    Err(_) => rcgen::SanType::DnsName(san.clone().try_into().map_err(|_| {
                        format!("SAN {san:?} is neither a DNS name nor an IP address")
                    })?),
                };
            params.subject_alt_names.push(name);
        }
        params.key_usages = vec![
            rcgen::KeyUsagePurpose::DigitalSignature,
            rcgen::KeyUsagePurpose::KeyEncipherment,
        ];
        params.extended_key_usages = match request.usage {
            CertificateUsage::Server => vec![rcgen::ExtendedKeyUsagePurpose::ServerAuth],
            CertificateUsage::Client => vec![rcgen::ExtendedKeyUsagePurpose::ClientAuth],
            CertificateUsage::Peer => vec![
                rcgen::ExtendedKeyUsagePurpose::ServerAuth,
                rcgen::ExtendedKeyUsagePurpose::ClientAuth,
            ],
        };
        validity(&mut params, self.validity);
        let cert = params
            .signed_by(&key, &issuer)
            .map_err(|e| format!("the CA does not sign it: {e}"))?;
        Ok((cert.pem(), key.serialize_pem()))
    }

    /// The cluster CA's certificate (PEM): what API servers' certificates chain to, what
    /// kubeconfigs trust and joins pin.
    pub fn cluster_certificate(&self) -> &str {
        &self.cluster.cert
    }

    /// An admin kubeconfig for `server`: a client certificate of `system:masters` from the
    /// cluster CA.
    ///
    /// # Errors
    ///
    /// When the CA does not sign.
    pub fn admin_kubeconfig(&self, cluster: &str, server: &str) -> Result<String, String> {
        let request = CertificateRequest {
            key: "admin".into(),
            authority: CertificateAuthority::Cluster,
            usage: CertificateUsage::Client,
            common_name: "kubernetes-admin".into(),
            organizations: vec!["system:masters".into()],
            sans: Vec::new(),
            kubeconfig_server: None,
        };
        let (cert, key) = self.certificate(&request)?;
        Ok(kubeconfig(
            server,
            &self.cluster.cert,
            &format!("{cluster}-admin"),
            &cert,
            &key,
        ))
    }
}

/// A new ECDSA P-256 key.
fn new_key() -> Result<rcgen::KeyPair, String> {
    rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256)
        .map_err(|e| format!("a new key: {e}"))
}

/// Valid from five minutes ago (clock skew) for `valid`.
fn validity(params: &mut rcgen::CertificateParams, valid: std::time::Duration) {
    let now = time::OffsetDateTime::now_utc();
    params.not_before = now - time::Duration::minutes(5);
    params.not_after =
        now.saturating_add(time::Duration::try_from(valid).unwrap_or(time::Duration::MAX));
}

/// A kubeconfig (JSON, which every kubeconfig reader takes as YAML) for `server` trusting
/// `ca` and authenticating as `user` with a client certificate.
fn kubeconfig(server: &str, ca: &str, user: &str, cert: &str, key: &str) -> String {
    json!({
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "cluster", "cluster": {
            "server": server,
            "certificate-authority-data": STANDARD.encode(ca),
        }}],
        "users": [{"name": user, "user": {
            "client-certificate-data": STANDARD.encode(cert),
            "client-key-data": STANDARD.encode(key),
        }}],
        "contexts": [{"name": user, "context": {"cluster": "cluster", "user": user}}],
        "current-context": user,
    })
    .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn deployment(name: &str) -> String {
        format!(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {name}\nspec:\n  replicas: 2\n"
        )
    }

    #[test]
    fn allowed_objects_pass_and_land_in_the_clusters_namespace() {
        let objects = check_plan_objects(&[deployment("alpha-api")], &[], "team", "alpha").unwrap();
        assert_eq!(objects[0]["metadata"]["namespace"], "team");
    }

    #[test]
    fn each_refusal_names_the_object() {
        let cases = [
            (
                "apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata:\n  name: alpha-x\n",
                "apply-manifests[0] (rbac.authorization.k8s.io/v1 RoleBinding alpha-x): not a kind",
            ),
            (
                "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: alpha-ns\n",
                "(v1 Namespace alpha-ns): not a kind",
            ),
            (
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: alpha-c\n  namespace: kube-system\n",
                "metadata.namespace is \"kube-system\"",
            ),
            (
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: beta-c\n",
                "(v1 ConfigMap beta-c): metadata.name must start with the Cluster's name and a dash (alpha-)",
            ),
            ("- 1\n- 2\n", "not an object"),
        ];
        for (manifest, want) in cases {
            let err = check_plan_objects(&[manifest.to_owned()], &[], "team", "alpha").unwrap_err();
            assert!(err.contains(want), "{manifest}: {err}");
        }
        let twice = check_plan_objects(
            &[deployment("alpha-a"), deployment("alpha-a")],
            &[],
            "team",
            "alpha",
        )
        .unwrap_err();
        assert!(
            twice.contains("apply-manifests[1]") && twice.contains("named twice"),
            "{twice}"
        );
    }

    #[test]
    fn a_shared_datastores_secret_is_checked_like_an_object() {
        let asked = |secret: &str| SharedDatastore {
            name: "shared-etcd".into(),
            secret: secret.into(),
        };
        assert_eq!(
            check_shared_datastore(&asked("alpha-datastore"), &[], &[], "alpha"),
            Ok(())
        );
        let err = check_shared_datastore(&asked("beta-datastore"), &[], &[], "alpha").unwrap_err();
        assert!(err.contains("must start with the Cluster's name"), "{err}");
        let objects = check_plan_objects(&[deployment("alpha-api")], &[], "team", "alpha").unwrap();
        let mut clash = objects[0].clone();
        clash["apiVersion"] = "v1".into();
        clash["kind"] = "Secret".into();
        clash["metadata"]["name"] = "alpha-datastore".into();
        let err =
            check_shared_datastore(&asked("alpha-datastore"), &[clash], &[], "alpha").unwrap_err();
        assert!(err.contains("named twice"), "{err}");
        let mut bad = asked("alpha-datastore");
        bad.name = "Not A Secret".into();
        let err = check_shared_datastore(&bad, &[], &[], "alpha").unwrap_err();
        assert!(err.contains("shared-datastore.name"), "{err}");
    }

    #[test]
    fn a_datastore_secret_is_read_by_type_and_keys_never_quoting_them() {
        let b64 = |s: &str| STANDARD.encode(s);
        let mut secret = json!({
            "metadata": {"name": "shared-etcd"},
            "type": "capw.dev/datastore",
            "data": {
                "endpoints": b64("https://10.0.0.1:2379"),
                "ca.crt": b64("CERT"),
                "ca.key": b64("TOP-SECRET-KEY"),
                "password": b64("TOP-SECRET-PASSWORD"),
            },
        });
        let read = SharedDatastoreSecret::from_secret(&secret).unwrap();
        assert_eq!(read.username, "root");
        assert!(!format!("{read:?}").contains("TOP-SECRET"), "{read:?}");
        secret["data"].as_object_mut().unwrap().remove("password");
        let err = SharedDatastoreSecret::from_secret(&secret).unwrap_err();
        assert_eq!(err, "the Secret shared-etcd has no password");
        secret["type"] = "Opaque".into();
        let err = SharedDatastoreSecret::from_secret(&secret).unwrap_err();
        assert!(
            err.contains("of type Opaque, not capw.dev/datastore"),
            "{err}"
        );
    }

    #[test]
    fn a_certificate_secret_is_checked_like_an_object() {
        let secret = |name: &str| CertificateSecret {
            name: name.into(),
            certificates: Vec::new(),
            materials: Vec::new(),
        };
        let err = check_plan_objects(&[], &[secret("other-certs")], "team", "alpha").unwrap_err();
        assert!(
            err.contains("certificates[0] (v1 Secret other-certs)"),
            "{err}"
        );
        let clash = "apiVersion: v1\nkind: Secret\nmetadata:\n  name: alpha-certs\n".to_owned();
        let err =
            check_plan_objects(&[clash], &[secret("alpha-certs")], "team", "alpha").unwrap_err();
        assert!(err.contains("named twice"), "{err}");
    }

    #[test]
    fn readiness_follows_the_rollout() {
        let d = |status: Value| json!({"kind": "Deployment", "metadata": {"generation": 2}, "spec": {"replicas": 2}, "status": status});
        assert!(!readiness(&d(json!({}))).0);
        let stale = d(
            json!({"observedGeneration": 1, "updatedReplicas": 2, "availableReplicas": 2, "replicas": 2}),
        );
        assert!(!readiness(&stale).0);
        let rolling = d(
            json!({"observedGeneration": 2, "updatedReplicas": 1, "availableReplicas": 2, "replicas": 3}),
        );
        let (ready, why) = readiness(&rolling);
        assert!(!ready);
        assert_eq!(why.unwrap(), "2/2 available, 1/2 updated, 3 in all");
        let done = d(
            json!({"observedGeneration": 2, "updatedReplicas": 2, "availableReplicas": 2, "replicas": 2}),
        );
        assert_eq!(readiness(&done), (true, None));
        assert!(readiness(&json!({"kind": "Service"})).0);
    }

    #[test]
    fn a_load_balancer_service_is_ready_once_it_has_an_address() {
        let lb = |status: Value| json!({"kind": "Service", "spec": {"type": "LoadBalancer"}, "status": status});
        let (ready, why) = readiness(&lb(json!({"loadBalancer": {}})));
        assert!(!ready);
        assert_eq!(why.unwrap(), "its load balancer has no address yet");
        assert!(load_balancer_addresses(&lb(json!({}))).is_empty());
        let given = lb(json!({"loadBalancer": {"ingress": [
            {"ip": "100.80.0.7"}, {"hostname": "cp.example.com"}, {"ip": ""},
        ]}}));
        assert_eq!(readiness(&given), (true, None));
        assert_eq!(
            load_balancer_addresses(&given),
            ["100.80.0.7", "cp.example.com"]
        );
        let cluster_ip = json!({"kind": "Service", "spec": {"type": "ClusterIP"},
            "status": {"loadBalancer": {"ingress": [{"ip": "100.80.0.7"}]}}});
        assert!(load_balancer_addresses(&cluster_ip).is_empty());
        assert!(readiness(&cluster_ip).0);
    }

    #[test]
    fn images_are_read_init_containers_first() {
        let images = capw_api::pod_template_images;
        let d = json!({"kind": "StatefulSet", "spec": {"template": {"spec": {
            "containers": [{"name": "etcd", "image": "registry.k8s.io/etcd:3.6.5-0"}],
            "initContainers": [{"name": "init", "image": "busybox:1"}],
        }}}});
        assert_eq!(images(&d), ["busybox:1", "registry.k8s.io/etcd:3.6.5-0"]);
        assert!(images(&json!({"kind": "Service", "spec": {}})).is_empty());
    }

    #[test]
    fn certificates_are_renewed_two_thirds_into_their_validity_and_unmarked_ones_at_once() {
        let now: jiff::Timestamp = "2026-12-04T12:00:00Z".parse().unwrap();
        let year = CERTIFICATE_VALIDITY;
        let at = renew_after(now, year);
        assert_eq!(at.to_string(), "2027-08-04T20:00:00Z");
        let secret = with_renewal(json!({"metadata": {"name": "c-certs"}}), at);
        assert_eq!(renewal_time(&secret), Some(at));
        assert!(!renewal_due(&secret, now));
        assert!(!renewal_due(
            &secret,
            at.checked_sub(jiff::SignedDuration::from_secs(1)).unwrap()
        ));
        assert!(renewal_due(&secret, at));
        // Minted before the host renewed certificates, or with an unreadable time: due now.
        assert!(renewal_due(&json!({"metadata": {"name": "c-certs"}}), now));
        let mut garbled = secret.clone();
        garbled["metadata"]["annotations"][RENEW_AFTER_ANNOTATION] = json!("next spring");
        assert!(renewal_due(&garbled, now));
        // A validity past what a time can hold renews never, rather than failing.
        assert_eq!(
            renew_after(now, std::time::Duration::MAX),
            jiff::Timestamp::MAX
        );
    }

    #[test]
    fn a_workload_rolls_when_a_secret_it_mounts_is_renewed_and_only_then() {
        let deployment = |volumes: Value| {
            json!({
                "apiVersion": "apps/v1", "kind": "Deployment",
                "metadata": {"name": "c-apiserver"},
                "spec": {"template": {"spec": {"volumes": volumes, "containers": []}}},
            })
        };
        let renewals: BTreeMap<String, String> = [
            ("c-certs".to_owned(), "2027-08-04T12:00:00Z".to_owned()),
            ("c-datastore".to_owned(), "2027-08-05T12:00:00Z".to_owned()),
        ]
        .into();
        let mut mounting = deployment(json!([
            {"name": "certs", "secret": {"secretName": "c-certs"}},
            {"name": "store", "projected": {"sources": [{"secret": {"name": "c-datastore"}}]}},
            {"name": "config", "configMap": {"name": "c-config"}},
        ]));
        roll_on_renewal(&mut mounting, &renewals);
        assert_eq!(
            mounting["spec"]["template"]["metadata"]["annotations"][CERTIFICATES_ANNOTATION],
            "c-certs=2027-08-04T12:00:00Z,c-datastore=2027-08-05T12:00:00Z"
        );
        let before = digest(&mounting);
        let mut renewed = renewals.clone();
        renewed.insert("c-certs".into(), "2027-12-01T00:00:00Z".into());
        let mut again = deployment(mounting["spec"]["template"]["spec"]["volumes"].clone());
        roll_on_renewal(&mut again, &renewed);
        assert_ne!(digest(&again), before, "a renewal must change the template");

        // A template that mounts none of them, and kinds without Pods, are left alone.
        let mut unrelated = deployment(json!([{"name": "x", "secret": {"secretName": "c-other"}}]));
        let untouched = unrelated.clone();
        roll_on_renewal(&mut unrelated, &renewals);
        assert_eq!(unrelated, untouched);
        let mut service = json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "c"}});
        let untouched = service.clone();
        roll_on_renewal(&mut service, &renewals);
        assert_eq!(service, untouched);
    }

    #[test]
    fn minted_certificates_last_as_long_as_asked() {
        let items = ClusterCas::generate("alpha").unwrap();
        let cas = ClusterCas::from_items(&items)
            .unwrap()
            .with_validity(std::time::Duration::from_secs(90));
        let secret = CertificateSecret {
            name: "alpha-certs".into(),
            certificates: vec![CertificateRequest {
                key: "client".into(),
                authority: CertificateAuthority::Cluster,
                usage: CertificateUsage::Client,
                common_name: "someone".into(),
                organizations: Vec::new(),
                sans: Vec::new(),
                kubeconfig_server: None,
            }],
            materials: Vec::new(),
        };
        let object = cas.mint(&secret, "team").unwrap();
        let pem = STANDARD
            .decode(object["data"]["client.crt"].as_str().unwrap())
            .unwrap();
        let (_, pem) = x509_parser::pem::parse_x509_pem(&pem).unwrap();
        let cert = pem.parse_x509().unwrap();
        let validity = cert.validity();
        // Five minutes of clock skew before, the asked validity after.
        let lasts = validity.not_after.timestamp() - validity.not_before.timestamp();
        assert_eq!(lasts, 5 * 60 + 90, "{validity:?}");
    }

    #[test]
    fn minted_certificates_chain_to_the_clusters_ca_and_carry_no_ca_key_unasked() {
        let items = ClusterCas::generate("alpha").unwrap();
        let cas = ClusterCas::from_items(&items).unwrap();
        let secret = CertificateSecret {
            name: "alpha-apiserver-certs".into(),
            certificates: vec![CertificateRequest {
                key: "apiserver".into(),
                authority: CertificateAuthority::Cluster,
                usage: CertificateUsage::Server,
                common_name: "kube-apiserver".into(),
                organizations: Vec::new(),
                sans: vec!["alpha-apiserver.team.svc".into(), "10.96.0.1".into()],
                kubeconfig_server: None,
            }],
            materials: vec![SecretMaterial::ClusterCaCertificate],
        };
        let object = cas.mint(&secret, "team").unwrap();
        let data = object["data"].as_object().unwrap();
        let keys: Vec<&str> = data.keys().map(String::as_str).collect();
        assert_eq!(keys, ["apiserver.crt", "apiserver.key", "ca.crt"]);
        let decode = |k: &str| {
            String::from_utf8(STANDARD.decode(data[k].as_str().unwrap()).unwrap()).unwrap()
        };
        assert_eq!(decode("ca.crt").as_bytes(), items[0].1.as_slice());
        let (_, cert_pem) =
            x509_parser::pem::parse_x509_pem(decode("apiserver.crt").as_bytes()).unwrap();
        let cert = cert_pem.parse_x509().unwrap();
        let (_, ca_pem) = x509_parser::pem::parse_x509_pem(&items[0].1).unwrap();
        let ca = ca_pem.parse_x509().unwrap();
        assert_eq!(cert.issuer(), ca.subject());
        cert.verify_signature(Some(ca.public_key())).unwrap();
        let sans: Vec<String> = cert
            .subject_alternative_name()
            .unwrap()
            .unwrap()
            .value
            .general_names
            .iter()
            .map(|n| n.to_string())
            .collect();
        assert_eq!(
            sans,
            [
                "DNSName(alpha-apiserver.team.svc)",
                "IPAddress(0a:60:00:01)"
            ]
        );
        // Another CA does not verify it.
        let other = ClusterCas::generate("beta").unwrap();
        let (_, other_pem) = x509_parser::pem::parse_x509_pem(&other[0].1).unwrap();
        let other_ca = other_pem.parse_x509().unwrap();
        assert!(cert.verify_signature(Some(other_ca.public_key())).is_err());
        // Unasked, the CA key is not there.
        assert!(data.get("ca.key").is_none());
        // Asked for, the CA key is there.
        let with_key = CertificateSecret {
            materials: vec![SecretMaterial::ClusterCa],
            ..secret.clone()
        };
        let object = cas.mint(&with_key, "team").unwrap();
        assert!(object["data"].get("ca.key").is_some());
        // A changed request or new CAs change the digest it is applied under.
        let other = CertificateSecret {
            name: "alpha-apiserver-certs".into(),
            ..with_key.clone()
        };
        assert_eq!(cas.request_digest(&other), cas.request_digest(&with_key));
        assert_ne!(cas.request_digest(&secret), cas.request_digest(&with_key));
    }
}
