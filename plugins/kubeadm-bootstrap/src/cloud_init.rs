//! A machine's bootstrap data: cloud-config that writes the kubeadm config (and, on
//! control-plane machines, the shared CAs and service-account keys) and runs
//! `kubeadm init` or `kubeadm join`.

use capw_sdk::bootstrap::{BootstrapRequest, ControlPlaneMember, JoinCredentials};
use capw_sdk::types::MachineRole;
use serde::Serialize;

use crate::config::KubeadmBootstrapConfig;
use crate::endpoint::{self, EndpointError};
use crate::kubeadm::{
    BootstrapToken, BootstrapTokenDiscovery, ClusterConfiguration, InitConfiguration,
    JoinConfiguration, JoinControlPlane, KubeadmConfig, LocalApiEndpoint, Networking,
};
use crate::pki::{self, PkiError};
use crate::secrets::{CONTROL_PLANE_FILES, SecretSet, SecretsError};
use crate::token;

/// Where the kubeadm config file is written; `runcmd` passes it to `--config`.
pub const KUBEADM_CONFIG_PATH: &str = "/run/kubeadm/kubeadm.yaml";
/// kubeadm's certificates directory; the shared CA files go below it.
pub const PKI_DIR: &str = "/etc/kubernetes/pki";
/// The etcd members at the time a control-plane join was generated, one
/// `name=https://address:2380` a line, sorted by name. kubeadm has no field for them (it
/// asks the cluster), so they are written for the node's tooling and for humans.
pub const ETCD_MEMBERS_PATH: &str = "/etc/kubernetes/capw/etcd-members";
/// The Kubernetes version the machine is meant to run, e.g. `v1.35.2`, on every role: joins
/// carry no version in kubeadm's config, and image tooling may pick packages by it.
pub const KUBERNETES_VERSION_PATH: &str = "/etc/kubernetes/capw/kubernetes-version";

/// etcd's peer port, as kubeadm sets it up.
const ETCD_PEER_PORT: u16 = 2380;

/// A request the provider cannot turn into bootstrap data. Names what is wrong, never a
/// secret.
#[derive(Debug, thiserror::Error)]
pub enum GenerateError {
    /// An init while the cluster already has members would start a second cluster.
    #[error(
        "role init, but the cluster already has {count} control-plane member(s): a second \
         init would start a second cluster; ask for join-control-plane"
    )]
    InitWithMembers {
        /// How many members the request named.
        count: usize,
    },
    /// A join while there is no control plane to join.
    #[error(
        "role {role} needs the current control-plane members and the request names none: \
         the cluster has no control plane to join yet"
    )]
    JoinWithoutMembers {
        /// The requested role.
        role: MachineRole,
    },
    /// A machine or member name that cannot be a Node or etcd member name.
    #[error("{what} `{name}` is not a lowercase DNS subdomain (a-z, 0-9, '-', '.')")]
    BadName {
        /// `machine name` or `control-plane member name`.
        what: &'static str,
        /// The name, escaped.
        name: String,
    },
    /// A member address that cannot be written into a URL.
    #[error("control-plane member `{member}` has address `{address}`, which is not a host")]
    BadMemberAddress {
        /// The member's name.
        member: String,
        /// The address, escaped.
        address: String,
    },
    /// A control-plane machine asked to join a control plane that a service runs
    /// (`request.join` given): such a control plane has no machines, and a machine of ours
    /// cannot become one of the service's members.
    #[error(
        "role {role} with join credentials: control-plane machines do not join a service's \
         control plane; only workers join one"
    )]
    ControlPlaneJoinsService {
        /// The requested role.
        role: MachineRole,
    },
    /// The service's join credentials carry no token: a kubeadm join discovers the cluster
    /// with a bootstrap token, so it cannot join without one.
    #[error(
        "the join credentials carry no token: kubeadm joins the service's control plane with a \
         bootstrap token"
    )]
    ServiceJoinWithoutToken,
    /// The service's token is not a kubeadm bootstrap token. The message never quotes it.
    #[error(
        "the join credentials' token (id `{id}`) is not a kubeadm bootstrap token of the form \
         [a-z0-9]{{6}}.[a-z0-9]{{16}}"
    )]
    BadServiceToken {
        /// The token's public id, escaped.
        id: String,
    },
    /// The service's CA certificate does not parse, so there is nothing to pin.
    #[error("the join credentials' ca-certificate is not a PEM X.509 certificate")]
    BadServiceCa(#[source] PkiError),
    /// The request's endpoint.
    #[error(transparent)]
    Endpoint(#[from] EndpointError),
    /// The request's secret items.
    #[error(transparent)]
    Secrets(#[from] SecretsError),
    /// Serializing YAML failed (not expected).
    #[error("rendering the cloud-config failed")]
    Render(#[source] serde_yaml_ng::Error),
}

/// The cloud-config (`#cloud-config` and a YAML mapping) that makes the requested machine a
/// node of cluster `cluster_name`.
///
/// # Guarantees
///
/// - `write_files` holds [`KUBEADM_CONFIG_PATH`] (mode 0600: it holds the token) and
///   [`KUBERNETES_VERSION_PATH`]; `runcmd` holds exactly one command, `kubeadm init` for the
///   role `init` and `kubeadm join` otherwise, with `--config` [`KUBEADM_CONFIG_PATH`].
/// - `init`: an `InitConfiguration` creating the cluster's bootstrap token and a
///   `ClusterConfiguration` with the endpoint, version, cluster name, key algorithm and
///   subnets.
/// - joins: a `JoinConfiguration` discovering the endpoint with the token, pinned to the CA
///   cert hash computed from `ca.crt`; a `controlPlane` section for `join-control-plane` only.
/// - `init` and `join-control-plane` also get the eight shared PKI files under [`PKI_DIR`]
///   (keys 0600, the rest 0644); a control-plane join also gets [`ETCD_MEMBERS_PATH`].
///   Workers get no key.
/// - Pure: the same request gives the same text (members are sorted by name).
/// - With `request.join` (a control plane that a service runs, contract 0.3): see
///   [`service_join`]; the secrets and members are not read.
///
/// # Errors
///
/// [`GenerateError`]: `init` with members, a join without members, a bad name, address or
/// endpoint, or a missing or garbled secret item; with `join`, a role other than `worker` or
/// unusable join credentials.
pub fn generate(
    config: &KubeadmBootstrapConfig,
    cluster_name: &str,
    request: &BootstrapRequest,
) -> Result<String, GenerateError> {
    if let Some(join) = &request.join {
        return service_join(request, join);
    }
    let members = &request.control_plane_members;
    match (request.role, members.is_empty()) {
        (MachineRole::Init, false) => {
            return Err(GenerateError::InitWithMembers {
                count: members.len(),
            });
        }
        (role @ (MachineRole::JoinControlPlane | MachineRole::Worker), true) => {
            return Err(GenerateError::JoinWithoutMembers { role });
        }
        _ => {}
    }
    let node_name = checked_name("machine name", &request.machine.name)?;
    let endpoint = endpoint::authority(&request.endpoint)?;
    let secrets = SecretSet::new(&request.secrets);
    let token = secrets.token()?;

    let mut files = Vec::new();
    if request.role != MachineRole::Worker {
        for (name, kind) in CONTROL_PLANE_FILES {
            files.push(WriteFile::new(
                format!("{PKI_DIR}/{name}"),
                kind.is_secret(),
                secrets.pem(name, kind)?.to_owned(),
            ));
        }
    }
    if request.role == MachineRole::JoinControlPlane {
        files.push(WriteFile::new(
            ETCD_MEMBERS_PATH.into(),
            false,
            etcd_members(members)?,
        ));
    }
    files.push(WriteFile::new(
        KUBERNETES_VERSION_PATH.into(),
        false,
        format!("{}\n", request.version),
    ));

    let bind_port = config.api_server_bind_port;
    let kubeadm = match request.role {
        MachineRole::Init => KubeadmConfig::Init {
            init: InitConfiguration::new(
                BootstrapToken::new(token.as_str(), config.bootstrap_token_ttl_hours),
                node_name,
                bind_port,
            ),
            cluster: ClusterConfiguration::new(
                cluster_name,
                request.version.to_string(),
                endpoint,
                config.key_algorithm.kubeadm_name(),
                Networking {
                    pod_subnet: config.pod_subnet.clone(),
                    service_subnet: config.service_subnet.clone(),
                    dns_domain: config.dns_domain.clone(),
                },
            ),
        },
        MachineRole::JoinControlPlane | MachineRole::Worker => {
            let control_plane =
                (request.role == MachineRole::JoinControlPlane).then_some(JoinControlPlane {
                    local_api_endpoint: LocalApiEndpoint { bind_port },
                });
            KubeadmConfig::Join(JoinConfiguration::new(
                BootstrapTokenDiscovery {
                    api_server_endpoint: endpoint,
                    token: token.as_str().to_owned(),
                    ca_cert_hashes: vec![secrets.ca_cert_hash()?],
                },
                node_name,
                control_plane,
            ))
        }
    };
    render(files, &kubeadm)
}

/// A worker's cloud-config for joining a control plane that a service runs: a
/// `JoinConfiguration` discovering `request.endpoint` with the service's token, pinned to the
/// hash of the service's CA certificate, and the version file. No PKI file and no secret item
/// of the cluster is read: the service keeps its CAs.
///
/// # Errors
///
/// [`GenerateError::ControlPlaneJoinsService`] for `init` and `join-control-plane`;
/// [`GenerateError::ServiceJoinWithoutToken`], [`GenerateError::BadServiceToken`] and
/// [`GenerateError::BadServiceCa`] for credentials kubeadm cannot join with; a bad machine
/// name or endpoint.
pub fn service_join(
    request: &BootstrapRequest,
    join: &JoinCredentials,
) -> Result<String, GenerateError> {
    if request.role != MachineRole::Worker {
        return Err(GenerateError::ControlPlaneJoinsService { role: request.role });
    }
    let node_name = checked_name("machine name", &request.machine.name)?;
    let endpoint = endpoint::authority(&request.endpoint)?;
    let given = join
        .token
        .as_ref()
        .ok_or(GenerateError::ServiceJoinWithoutToken)?;
    let token = token::BootstrapToken::parse(&format!("{}.{}", given.id, given.secret))
        .ok_or_else(|| GenerateError::BadServiceToken {
            id: given.id.escape_debug().to_string(),
        })?;
    let ca =
        pki::cert_from_pem(join.ca_certificate.as_bytes()).map_err(GenerateError::BadServiceCa)?;
    let ca_cert_hash = pki::ca_cert_hash(&ca).map_err(GenerateError::BadServiceCa)?;
    let files = vec![WriteFile::new(
        KUBERNETES_VERSION_PATH.into(),
        false,
        format!("{}\n", request.version),
    )];
    let kubeadm = KubeadmConfig::Join(JoinConfiguration::new(
        BootstrapTokenDiscovery {
            api_server_endpoint: endpoint,
            token: token.as_str().to_owned(),
            ca_cert_hashes: vec![ca_cert_hash],
        },
        node_name,
        None,
    ));
    render(files, &kubeadm)
}

/// `files` and the kubeadm config file, and the one `kubeadm init` or `kubeadm join` command.
fn render(mut files: Vec<WriteFile>, kubeadm: &KubeadmConfig) -> Result<String, GenerateError> {
    files.push(WriteFile::new(
        KUBEADM_CONFIG_PATH.into(),
        true,
        kubeadm.to_yaml().map_err(GenerateError::Render)?,
    ));
    let verb = match kubeadm {
        KubeadmConfig::Init { .. } => "init",
        KubeadmConfig::Join(_) => "join",
    };
    CloudConfig {
        write_files: files,
        runcmd: vec![format!("kubeadm {verb} --config {KUBEADM_CONFIG_PATH}")],
    }
    .render()
}

/// The cloud-config keys the provider uses.
#[derive(Debug, Serialize)]
struct CloudConfig {
    write_files: Vec<WriteFile>,
    runcmd: Vec<String>,
}

impl CloudConfig {
    fn render(&self) -> Result<String, GenerateError> {
        let yaml = serde_yaml_ng::to_string(self).map_err(GenerateError::Render)?;
        Ok(format!("#cloud-config\n{yaml}"))
    }
}

/// One `write_files` entry.
#[derive(Debug, Serialize)]
struct WriteFile {
    path: String,
    owner: &'static str,
    permissions: &'static str,
    content: String,
}

impl WriteFile {
    fn new(path: String, secret: bool, content: String) -> Self {
        Self {
            path,
            owner: "root:root",
            permissions: if secret { "0600" } else { "0644" },
            content,
        }
    }
}

/// `name` if it is a lowercase RFC 1123 subdomain, as Node and etcd member names must be.
fn checked_name<'a>(what: &'static str, name: &'a str) -> Result<&'a str, GenerateError> {
    let valid = !name.is_empty()
        && name.len() <= 253
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'.');
    if valid {
        Ok(name)
    } else {
        Err(GenerateError::BadName {
            what,
            name: name.escape_debug().to_string(),
        })
    }
}

/// The [`ETCD_MEMBERS_PATH`] file: `name=https://address:2380` lines, sorted by name.
fn etcd_members(members: &[ControlPlaneMember]) -> Result<String, GenerateError> {
    let mut lines = Vec::with_capacity(members.len());
    for member in members {
        let name = checked_name("control-plane member name", &member.name)?;
        let peer = endpoint::authority(&capw_sdk::types::Endpoint {
            host: member.address.clone(),
            port: ETCD_PEER_PORT,
        })
        .map_err(|_| GenerateError::BadMemberAddress {
            member: name.to_owned(),
            address: member.address.escape_debug().to_string(),
        })?;
        lines.push(format!("{name}=https://{peer}\n"));
    }
    lines.sort();
    Ok(lines.concat())
}

#[cfg(test)]
mod tests;
