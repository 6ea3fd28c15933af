//! The boot check: does an instance's bootstrap data turn it into a node of its cluster?
//!
//! Pure: bytes and expectations in, a verdict out. The sim runs it when an instance finishes
//! booting; a failure becomes the instance's `reason`, prefixed with `bootstrap: `.
//!
//! # What passes
//!
//! Cloud-config (first line `#cloud-config`, then a YAML mapping) whose `runcmd` runs
//! `kubeadm init --config P` or `kubeadm join --config P`, where `P` is written by a
//! `write_files` entry (plain or base64 content) or by a heredoc in `runcmd`
//! (`cat <<EOF > P`), and holds `kubeadm.k8s.io/v1beta4` documents that:
//!
//! - for `init` (control-plane instances only): an `InitConfiguration` with
//!   `bootstrapTokens[].token`, and a `ClusterConfiguration` whose `controlPlaneEndpoint` is the
//!   cluster's endpoint. When the cluster has a registration, the tokens must include its token
//!   and a CA written to [`CA_CERT_PATH`], if any, must hash to its CA cert hash. When it has
//!   none, the init *makes* the registration, as `kubeadm init` makes a real cluster's token
//!   and CA: the first token and the hash of the CA at [`CA_CERT_PATH`], which must be there;
//! - for `join`: a `JoinConfiguration` whose `discovery.bootstrapToken` has `apiServerEndpoint`
//!   equal to the cluster's endpoint, `token` equal to the registered token and a
//!   `caCertHashes` entry equal to the registered CA cert hash; with a `controlPlane` section
//!   exactly when the instance's role is control-plane.
//!
//! A port left out of an endpoint means 6443, as in kubeadm; hosts compare case-insensitively.
//!
//! # Caveats
//!
//! Flag-only joins (`kubeadm join host:port --token …`) and file discovery are refused: the
//! sim reads configuration documents only. The CA certificate is parsed only as far as its
//! public key, which is what kubeadm's CA cert hash covers; its signature is not checked.

mod cloud_config;
mod error;
mod machine_data;
#[cfg(test)]
mod tests;

pub use error::BootCheckError;
pub use machine_data::{DEFAULT_BIND_PORT, FileToWrite, MachineData, machine_data};

use cloud_config::{
    KubeadmDocuments, Verb, kubeadm_command, kubeadm_documents, runcmd_lines, string_at, value_at,
    written_file,
};
use serde_yaml_ng::Value;
use sha2::{Digest, Sha256};
use x509_cert::Certificate;
use x509_cert::der::{DecodePem, Encode};

use crate::model::{Endpoint, Role};

/// The kubeadm configuration API the sim accepts.
pub const KUBEADM_API_VERSION: &str = "kubeadm.k8s.io/v1beta4";

/// Where kubeadm reads the cluster CA from; `init` data writes it there when the CA is made
/// outside the node, as capw's bootstrap providers do.
pub const CA_CERT_PATH: &str = "/etc/kubernetes/pki/ca.crt";

/// The port kubeadm assumes when an endpoint names none.
const DEFAULT_API_SERVER_PORT: u16 = 6443;

/// What the bootstrap data must agree with, as registered with the sim for the cluster.
#[derive(Clone, Copy, Debug)]
pub struct BootExpectations<'a> {
    /// The instance's cluster, for messages.
    pub cluster: &'a str,
    /// The instance's role.
    pub role: Role,
    /// The cluster's endpoint (its load balancer, else its managed control plane); `None` when
    /// it has neither.
    pub endpoint: Option<&'a Endpoint>,
    /// The cluster's registered bootstrap secrets; `None` when none were registered.
    pub secrets: Option<ClusterSecrets<'a>>,
    /// Whether the token is the workload cluster's to judge (a real boot, whose joins do real
    /// token discovery against the cluster's own bootstrap-token Secrets): only its form is
    /// checked here, not that it is the registered one. With simulated machines there is no
    /// cluster to ask, and the registered token is the judge.
    pub cluster_judges_token: bool,
}

/// A cluster's registered bootstrap token and CA cert hash.
#[derive(Clone, Copy, Debug)]
pub struct ClusterSecrets<'a> {
    /// `[a-z0-9]{6}.[a-z0-9]{16}`.
    pub token: &'a str,
    /// `sha256:<64 hex digits>`.
    pub ca_cert_hash: &'a str,
    /// A token that was the registered one until it was renewed, still valid: joins made
    /// with it just before the renewal pass as they would in the cluster.
    pub previous_token: Option<&'a str>,
}

/// The outcome of a passed check.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verdict {
    /// What the instance does.
    pub action: KubeadmAction,
    /// For an `init` in a cluster without a registration: the token and CA cert hash the
    /// cluster now has, which later joins must carry.
    pub registers: Option<LearnedSecrets>,
}

/// A token and CA cert hash learnt from `init` data.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LearnedSecrets {
    /// The first `bootstrapTokens[].token` of the `InitConfiguration`.
    pub token: String,
    /// `sha256:<hex>` of the DER SubjectPublicKeyInfo of the CA at [`CA_CERT_PATH`].
    pub ca_cert_hash: String,
}

/// What the instance does when it boots, once the check passed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KubeadmAction {
    /// `kubeadm init`: the first control-plane node.
    Init,
    /// `kubeadm join`; `control_plane` when it joins as a control-plane node.
    Join {
        /// The join carries a `controlPlane` section.
        control_plane: bool,
    },
}

/// Whether `token` has the form of a kubeadm bootstrap token, `[a-z0-9]{6}.[a-z0-9]{16}`.
pub fn is_bootstrap_token(token: &str) -> bool {
    let lower_alnum = |s: &str| {
        s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
    };
    match token.split_once('.') {
        Some((id, secret)) => {
            id.len() == 6 && secret.len() == 16 && lower_alnum(id) && lower_alnum(secret)
        }
        None => false,
    }
}

/// Whether `hash` has the form `sha256:<64 hex digits>` (either case).
pub fn is_ca_cert_hash(hash: &str) -> bool {
    hash.strip_prefix("sha256:")
        .is_some_and(|hex| hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// Checks `data` against `expect`.
///
/// # Errors
///
/// The first problem found, in this order: text and cloud-config form, the kubeadm command, its
/// configuration documents, the role, the endpoint, the token, the CA cert hash.
pub fn check(data: &[u8], expect: &BootExpectations<'_>) -> Result<Verdict, BootCheckError> {
    let text = std::str::from_utf8(data).map_err(|_| BootCheckError::NotUtf8)?;
    let first_line = text.lines().next().unwrap_or_default();
    if first_line.trim_end() != "#cloud-config" {
        return Err(BootCheckError::NotCloudConfig);
    }
    let cloud_config: Value = serde_yaml_ng::from_str(text).map_err(BootCheckError::InvalidYaml)?;
    let empty = serde_yaml_ng::Mapping::new();
    let cloud_config = match &cloud_config {
        // Only comments: nothing to run, which the command check reports.
        Value::Null => &empty,
        other => other.as_mapping().ok_or(BootCheckError::NotAMapping)?,
    };

    let commands = runcmd_lines(cloud_config)?;
    let command = kubeadm_command(&commands)?;
    let config_path = command
        .config_path
        .clone()
        .ok_or(BootCheckError::NoConfigFlag {
            command: command.verb.name(),
        })?;
    let config_text = written_file(cloud_config, &commands, &config_path)?.ok_or_else(|| {
        BootCheckError::ConfigFileNotWritten {
            command: command.verb.name(),
            path: config_path.clone(),
        }
    })?;
    let documents = kubeadm_documents(&config_path, &config_text)?;

    match command.verb {
        Verb::Init => {
            let ca_cert = written_file(cloud_config, &commands, CA_CERT_PATH)?;
            check_init(&config_path, &documents, ca_cert.as_deref(), expect)
        }
        Verb::Join => check_join(&config_path, &documents, expect).map(|action| Verdict {
            action,
            registers: None,
        }),
    }
}

/// kubeadm's CA cert hash of the PEM certificate `pem`: `sha256:` and the hex digest of its
/// DER SubjectPublicKeyInfo.
///
/// # Errors
///
/// [`BootCheckError::BadCaCert`] when `pem` is not one PEM certificate.
pub fn ca_cert_hash(pem: &str) -> Result<String, BootCheckError> {
    let bad = |reason: String| BootCheckError::BadCaCert {
        path: CA_CERT_PATH,
        reason,
    };
    let cert = Certificate::from_pem(pem.trim().as_bytes()).map_err(|e| bad(e.to_string()))?;
    let spki = cert
        .tbs_certificate()
        .subject_public_key_info()
        .to_der()
        .map_err(|e| bad(e.to_string()))?;
    Ok(format!("sha256:{}", hex::encode(Sha256::digest(spki))))
}

fn check_init(
    path: &str,
    documents: &KubeadmDocuments,
    ca_cert: Option<&str>,
    expect: &BootExpectations<'_>,
) -> Result<Verdict, BootCheckError> {
    if expect.role == Role::Worker {
        return Err(BootCheckError::WorkerInit);
    }
    let init = documents.get(path, "InitConfiguration")?;
    let cluster_config = documents.get(path, "ClusterConfiguration")?;

    let found = string_at(cluster_config, &["controlPlaneEndpoint"]).ok_or(
        BootCheckError::MissingField {
            kind: "ClusterConfiguration",
            field: "controlPlaneEndpoint",
        },
    )?;
    check_endpoint("initialises with", "controlPlaneEndpoint", found, expect)?;

    let tokens: Vec<&str> = value_at(init, &["bootstrapTokens"])
        .and_then(Value::as_sequence)
        .map(|list| {
            list.iter()
                .filter_map(|t| string_at(t, &["token"]))
                .collect()
        })
        .unwrap_or_default();
    if tokens.is_empty() {
        return Err(BootCheckError::MissingField {
            kind: "InitConfiguration",
            field: "bootstrapTokens[].token",
        });
    }
    const FIELD: &str = "InitConfiguration.bootstrapTokens[].token";
    if !tokens.iter().all(|t| is_bootstrap_token(t)) {
        return Err(BootCheckError::TokenFormat { field: FIELD });
    }
    let ca_hash = ca_cert.map(ca_cert_hash).transpose()?;
    let Some(secrets) = expect.secrets else {
        let ca_cert_hash = ca_hash.ok_or(BootCheckError::NoCaCert {
            path: CA_CERT_PATH,
            cluster: expect.cluster.to_owned(),
        })?;
        return Ok(Verdict {
            action: KubeadmAction::Init,
            registers: Some(LearnedSecrets {
                token: tokens[0].to_owned(),
                ca_cert_hash,
            }),
        });
    };
    if !expect.cluster_judges_token && !tokens.contains(&secrets.token) {
        return Err(BootCheckError::TokenMismatch {
            field: FIELD,
            cluster: expect.cluster.to_owned(),
        });
    }
    if let Some(found) = ca_hash
        && !found.eq_ignore_ascii_case(secrets.ca_cert_hash)
    {
        return Err(BootCheckError::CaCertHashMismatch {
            found: vec![found],
            expected: secrets.ca_cert_hash.to_owned(),
            cluster: expect.cluster.to_owned(),
        });
    }
    Ok(Verdict {
        action: KubeadmAction::Init,
        registers: None,
    })
}

fn check_join(
    path: &str,
    documents: &KubeadmDocuments,
    expect: &BootExpectations<'_>,
) -> Result<KubeadmAction, BootCheckError> {
    let join = documents.get(path, "JoinConfiguration")?;
    let control_plane = value_at(join, &["controlPlane"]).is_some_and(|v| !v.is_null());
    match (expect.role, control_plane) {
        (Role::Worker, true) => return Err(BootCheckError::WorkerJoinsControlPlane),
        (Role::ControlPlane, false) => return Err(BootCheckError::ControlPlaneJoinsAsWorker),
        _ => {}
    }
    if value_at(join, &["discovery", "file"]).is_some_and(|v| !v.is_null()) {
        return Err(BootCheckError::FileDiscovery);
    }
    let discovery =
        value_at(join, &["discovery", "bootstrapToken"]).ok_or(BootCheckError::MissingField {
            kind: "JoinConfiguration",
            field: "discovery.bootstrapToken",
        })?;
    let found =
        string_at(discovery, &["apiServerEndpoint"]).ok_or(BootCheckError::MissingField {
            kind: "JoinConfiguration",
            field: "discovery.bootstrapToken.apiServerEndpoint",
        })?;
    // A real-boot worker joining a control plane the cloud never saw (a hosted one, run
    // elsewhere: no load balancer or managed control plane of the cloud, no registration):
    // its own discovery against that control plane judges the endpoint, the token and the CA
    // pin, as kubeadm's does; here only their form is checked.
    let outside = expect.cluster_judges_token
        && expect.endpoint.is_none()
        && expect.secrets.is_none()
        && !control_plane;
    if outside {
        parse_endpoint(found).ok_or_else(|| BootCheckError::BadEndpoint {
            field: "apiServerEndpoint",
            found: found.to_owned(),
        })?;
    } else {
        check_endpoint("joins", "apiServerEndpoint", found, expect)?;
    }

    let secrets = if outside {
        None
    } else {
        Some(registered(expect)?)
    };
    const TOKEN: &str = "discovery.bootstrapToken.token";
    let token = string_at(discovery, &["token"]).ok_or(BootCheckError::MissingField {
        kind: "JoinConfiguration",
        field: TOKEN,
    })?;
    check_token(TOKEN, token, secrets, expect)?;
    if let Some(tls_token) = string_at(join, &["discovery", "tlsBootstrapToken"]) {
        check_token("discovery.tlsBootstrapToken", tls_token, secrets, expect)?;
    }

    let hashes: Vec<String> = value_at(discovery, &["caCertHashes"])
        .and_then(Value::as_sequence)
        .map(|list| {
            list.iter()
                .filter_map(|h| h.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    if hashes.is_empty() {
        return Err(BootCheckError::NoCaCertHashes);
    }
    if let Some(bad) = hashes.iter().find(|h| !is_ca_cert_hash(h)) {
        return Err(BootCheckError::CaCertHashFormat { found: bad.clone() });
    }
    if let Some(secrets) = secrets
        && !hashes
            .iter()
            .any(|h| h.eq_ignore_ascii_case(secrets.ca_cert_hash))
    {
        return Err(BootCheckError::CaCertHashMismatch {
            found: hashes,
            expected: secrets.ca_cert_hash.to_owned(),
            cluster: expect.cluster.to_owned(),
        });
    }
    Ok(KubeadmAction::Join { control_plane })
}

fn registered<'a>(expect: &BootExpectations<'a>) -> Result<ClusterSecrets<'a>, BootCheckError> {
    expect.secrets.ok_or_else(|| BootCheckError::NotRegistered {
        cluster: expect.cluster.to_owned(),
    })
}

fn check_token(
    field: &'static str,
    token: &str,
    secrets: Option<ClusterSecrets<'_>>,
    expect: &BootExpectations<'_>,
) -> Result<(), BootCheckError> {
    if !is_bootstrap_token(token) {
        return Err(BootCheckError::TokenFormat { field });
    }
    if let Some(secrets) = secrets
        && !expect.cluster_judges_token
        && token != secrets.token
        && Some(token) != secrets.previous_token
    {
        return Err(BootCheckError::TokenMismatch {
            field,
            cluster: expect.cluster.to_owned(),
        });
    }
    Ok(())
}

fn check_endpoint(
    verb: &'static str,
    field: &'static str,
    found: &str,
    expect: &BootExpectations<'_>,
) -> Result<(), BootCheckError> {
    let expected = expect
        .endpoint
        .ok_or_else(|| BootCheckError::NoClusterEndpoint {
            cluster: expect.cluster.to_owned(),
        })?;
    let parsed = parse_endpoint(found).ok_or_else(|| BootCheckError::BadEndpoint {
        field,
        found: found.to_owned(),
    })?;
    if parsed.host.eq_ignore_ascii_case(&expected.host) && parsed.port == expected.port {
        Ok(())
    } else {
        Err(BootCheckError::EndpointMismatch {
            verb,
            found: parsed.to_string(),
            expected: expected.to_string(),
        })
    }
}

/// `host`, `host:port`, `[v6]` or `[v6]:port`; the port defaults to 6443.
fn parse_endpoint(text: &str) -> Option<Endpoint> {
    let text = text.trim();
    let (host, port) = if let Some(rest) = text.strip_prefix('[') {
        let (host, after) = rest.split_once(']')?;
        match after {
            "" => (host, None),
            _ => (host, Some(after.strip_prefix(':')?)),
        }
    } else {
        match text.split_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (text, None),
        }
    };
    if host.is_empty() || host.contains(char::is_whitespace) {
        return None;
    }
    let port = match port {
        Some(p) => p.parse().ok()?,
        None => DEFAULT_API_SERVER_PORT,
    };
    Some(Endpoint {
        host: host.to_owned(),
        port,
    })
}
