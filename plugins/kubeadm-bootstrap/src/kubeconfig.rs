//! The cluster's admin kubeconfig: a client certificate signed by the cluster CA, as
//! kubeadm's `admin.conf`.

use std::time::SystemTime;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use capw_sdk::types::Endpoint;
use serde::Serialize;

use crate::config::KeyAlgorithm;
use crate::endpoint::{self, EndpointError};
use crate::pki::{self, CLIENT_VALIDITY, PkiError};
use crate::secrets::{CA_CRT, PemKind, SecretSet, SecretsError};

/// The admin's user name (the certificate's CN), as kubeadm's `admin.conf`.
pub const ADMIN_USER: &str = "kubernetes-admin";
/// The admin's group (the certificate's O), which kubeadm binds to `cluster-admin`.
pub const ADMIN_GROUP: &str = "kubeadm:cluster-admins";

/// Why no kubeconfig could be made.
#[derive(Debug, thiserror::Error)]
pub enum KubeconfigError {
    /// The endpoint cannot be a server URL.
    #[error(transparent)]
    Endpoint(#[from] EndpointError),
    /// `ca.crt` or `ca.key` is missing or garbled.
    #[error(transparent)]
    Secrets(#[from] SecretsError),
    /// Issuing the client certificate failed.
    #[error("issuing the admin client certificate failed")]
    Issue(#[source] PkiError),
    /// Serializing YAML failed (not expected).
    #[error("rendering the kubeconfig failed")]
    Render(#[source] serde_yaml_ng::Error),
}

/// A kubeconfig (YAML) for `cluster_name` at `endpoint`, authenticating as
/// [`ADMIN_USER`] in [`ADMIN_GROUP`] with a fresh client certificate of `algorithm` signed
/// by the cluster CA in `secrets`, valid for [`CLIENT_VALIDITY`] from `now`.
///
/// # Guarantees
///
/// One cluster named `cluster_name` with `server: https://host:port` and the CA as
/// `certificate-authority-data`; one user `kubernetes-admin` with `client-certificate-data`
/// and `client-key-data`; one context `kubernetes-admin@<cluster_name>`, current. Secret.
///
/// # Errors
///
/// [`KubeconfigError`]; a missing or garbled `ca.crt` / `ca.key` names the item.
pub fn admin_kubeconfig(
    cluster_name: &str,
    endpoint: &Endpoint,
    secrets: SecretSet<'_>,
    algorithm: KeyAlgorithm,
    now: SystemTime,
) -> Result<String, KubeconfigError> {
    let server = format!("https://{}", endpoint::authority(endpoint)?);
    let ca_pem = secrets.pem(CA_CRT, PemKind::Certificate)?;
    let ca = secrets.ca()?;
    let client = pki::client_cert(
        &ca,
        ADMIN_USER,
        ADMIN_GROUP,
        algorithm,
        now,
        CLIENT_VALIDITY,
    )
    .map_err(KubeconfigError::Issue)?;
    let cert_pem = pki::cert_to_pem(&client.cert).map_err(KubeconfigError::Issue)?;
    let key_pem = client.key.to_pkcs8_pem().map_err(KubeconfigError::Issue)?;

    let context = format!("{ADMIN_USER}@{cluster_name}");
    let config = Kubeconfig {
        api_version: "v1",
        kind: "Config",
        clusters: vec![Named {
            name: cluster_name.to_owned(),
            cluster: Some(Cluster {
                server,
                certificate_authority_data: BASE64.encode(ca_pem),
            }),
            user: None,
            context: None,
        }],
        users: vec![Named {
            name: ADMIN_USER.to_owned(),
            cluster: None,
            user: Some(User {
                client_certificate_data: BASE64.encode(cert_pem),
                client_key_data: BASE64.encode(key_pem),
            }),
            context: None,
        }],
        contexts: vec![Named {
            name: context.clone(),
            cluster: None,
            user: None,
            context: Some(Context {
                cluster: cluster_name.to_owned(),
                user: ADMIN_USER.to_owned(),
            }),
        }],
        current_context: context,
    };
    serde_yaml_ng::to_string(&config).map_err(KubeconfigError::Render)
}

/// `clientcmd/v1` `Config`, the fields used.
#[derive(Serialize)]
#[serde(rename_all = "kebab-case")]
struct Kubeconfig {
    #[serde(rename = "apiVersion")]
    api_version: &'static str,
    kind: &'static str,
    clusters: Vec<Named>,
    users: Vec<Named>,
    contexts: Vec<Named>,
    current_context: String,
}

/// A named cluster, user or context: exactly one of the three is set.
#[derive(Serialize)]
struct Named {
    name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    cluster: Option<Cluster>,
    #[serde(skip_serializing_if = "Option::is_none")]
    user: Option<User>,
    #[serde(skip_serializing_if = "Option::is_none")]
    context: Option<Context>,
}

#[derive(Serialize)]
#[serde(rename_all = "kebab-case")]
struct Cluster {
    server: String,
    certificate_authority_data: String,
}

#[derive(Serialize)]
#[serde(rename_all = "kebab-case")]
struct User {
    client_certificate_data: String,
    client_key_data: String,
}

#[derive(Serialize)]
struct Context {
    cluster: String,
    user: String,
}
