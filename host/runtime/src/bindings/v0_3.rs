//! The bindings of `capw:provider@0.3.x` (`wit/0.3/`): the generated types, how each
//! contract function lowers the model's input into them and lifts its answer back, and the
//! host interfaces of this version. Nothing generated leaves this module.
//!
//! What differs from 0.2 for the host (docs/contract.md, "Contract 0.3"):
//! - a control-plane `member` says where it stands in etcd (`etcd`), why it is out of date
//!   (`out-of-date`) and why it is to be replaced as unhealthy (`unhealthy`);
//! - `capabilities` declare `chains-upgrades`;
//! - `bootstrap` has `current-join-token` and `renew-join-token`, and a bootstrap request
//!   carries the `join` credentials of a control plane a service runs;
//! - `control-plane` has `reconcile-control-plane` and `delete-control-plane` for the shapes
//!   without machines, a plan's input the Cluster's `failures-tolerated` ask, and its status
//!   what the control plane tolerates;
//! - a hosted plan's input tells the objects the host applied (`objects`) and its answer
//!   names the certificate Secrets the host mints (`certificates`).

use wasmtime::component::Resource;

use super::Conv;
use crate::model;
use crate::sandbox::{CallState, LogLevel, SecretLookupError};

resource_context_version!("../../wit/0.3");

bind_extension_points! {
    Version, context: Resource<types::CallContext> = |state, ctx| super::lend(state, ctx);
    CurrentJoinToken (secrets: Vec<bootstrap::SecretItem>) -> Option<bootstrap::JoinToken>;
    RenewJoinToken (secrets: Vec<bootstrap::SecretItem>) -> bootstrap::JoinToken;
    ReconcileControlPlane (input: control_plane::PlanInput) -> control_plane::ReconcileOutput;
    DeleteControlPlane () -> types::Deletion;
}

record! {
    control_plane::Member {
        machine, version, failure_domain, ready, created_at, deleting, etcd, out_of_date,
        unhealthy,
    }
    metadata::Capabilities {
        control_plane_shape, control_plane_scalable, version_upgrades, chains_upgrades,
    }
    bootstrap::JoinToken { item, id, secret, ttl_seconds, extra_groups }
    bootstrap::BootstrapRequest {
        machine, role, version, endpoint, secrets, control_plane_members, join,
    }
    bootstrap::JoinCredentials { ca_certificate, token }
    control_plane::PlanInput {
        version, replicas, members, failure_domains, endpoint, failures_tolerated, objects,
    }
    control_plane::HostedObject { api_version, kind, name, ready, message, images, addresses }
    control_plane::CertificateRequest {
        key, authority, usage, common_name, organizations, sans, kubeconfig_server,
    }
    control_plane::CertificateSecret { name, certificates, materials }
    control_plane::ControlPlaneAccess { endpoint, ca_certificate, admin_kubeconfig, join_token }
}

/// Only lifted: the host never passes a reconcile answer to a provider.
impl Conv<model::control_plane::ReconcileOutput> for control_plane::ReconcileOutput {
    fn conv(self) -> model::control_plane::ReconcileOutput {
        model::control_plane::ReconcileOutput {
            plan: self.plan.conv(),
            access: self.access.conv(),
        }
    }
}

/// How many failures the control plane tolerates, as its status says.
fn failures_tolerated(status: &control_plane::ControlPlaneStatus) -> Option<u32> {
    status.failures_tolerated
}

/// The shared etcd a hosted plan keeps its state in.
fn shared_datastore(
    out: &control_plane::PlanOutput,
) -> Option<model::control_plane::SharedDatastore> {
    out.shared_datastore
        .clone()
        .map(|d| model::control_plane::SharedDatastore {
            name: d.name,
            secret: d.secret,
        })
}

/// The Secrets a hosted plan asks the host to mint.
fn certificates(out: &control_plane::PlanOutput) -> Vec<model::control_plane::CertificateSecret> {
    out.certificates.clone().conv()
}

cases! {
    control_plane::EtcdMembership { Unknown, Member, NotMember }
    control_plane::CertificateAuthority { Cluster, FrontProxy, Etcd }
    control_plane::CertificateUsage { Server, Client, Peer }
    control_plane::SecretMaterial {
        ClusterCaCertificate, ClusterCa, FrontProxyCaCertificate, EtcdCaCertificate,
        ServiceAccountKeys,
    }
}
