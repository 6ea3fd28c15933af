//! The state's side of a real boot: what the machines side should run, and the outcomes it
//! reports back. Pure, like the rest of the state: the processes are [`crate::machines`]'s.

use std::net::{Ipv4Addr, SocketAddrV4};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;

use super::index::Indexed as _;
use super::instances::instance_view;
use super::{CloudSettings, CloudState, Kind, Registration};
use crate::boot_check::{self, KubeadmAction, LearnedSecrets};
use crate::model::{InstanceState, Role};

/// What the machines side should be running, as the state says now.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MachinePlan {
    /// Instances that are `booting`: to launch, or whose machine to watch for its outcome.
    pub booting: Vec<String>,
    /// Instances that are `running`: whose machine to watch for a death.
    pub running: Vec<String>,
    /// Every load balancer that has an address, with its backends.
    pub load_balancers: Vec<LoadBalancerPlan>,
}

/// A load balancer's process: where it listens and where it sends connections.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoadBalancerPlan {
    /// `lb-<n>`.
    pub id: String,
    /// Its loopback address and port.
    pub listen: SocketAddrV4,
    /// The API servers of its cluster's `running` control-plane instances, sorted.
    pub backends: Vec<SocketAddrV4>,
}

/// What the machine of a `booting` instance should run, with the sim's own verdict on it.
pub struct LaunchOrder {
    /// `i-<n>`.
    pub id: String,
    /// The instance's name: its Node's name.
    pub name: String,
    /// `sim://instances/<id>`.
    pub provider_id: String,
    /// Its loopback address.
    pub address: Ipv4Addr,
    /// The decoded bootstrap data.
    pub data: Vec<u8>,
    /// The boot check's verdict on what kubeadm cannot judge (the endpoint, token and CA hash
    /// registered with the cluster): the agent's role and, for an `init` in a cluster
    /// without one, the registration it makes; or the failure reason.
    pub verdict: Result<(AgentRole, Option<LearnedSecrets>), String>,
}

/// The role a machine's agent plays, as `capw-node boot --role` spells it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AgentRole {
    /// `kubeadm init`.
    Init,
    /// A control-plane `kubeadm join`.
    JoinControlPlane,
    /// A worker `kubeadm join`.
    Worker,
}

impl AgentRole {
    /// `init`, `join-control-plane` or `worker`.
    pub fn as_str(self) -> &'static str {
        match self {
            AgentRole::Init => "init",
            AgentRole::JoinControlPlane => "join-control-plane",
            AgentRole::Worker => "worker",
        }
    }
}

/// How a machine's boot or life ended, as the machines side saw it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MachineOutcome {
    /// Booted: the instance runs.
    Ready,
    /// Failed to boot, or died: the instance fails with this reason.
    Failed(String),
}

impl CloudState {
    /// What should run: the `booting` and `running` instances and the load balancers.
    pub fn machine_plan(&self) -> MachinePlan {
        let ids = |state: InstanceState| {
            self.instances
                .values()
                .filter(|i| i.state == state && !i.deleting)
                .map(|i| Kind::Instance.id(i.id))
                .collect()
        };
        let load_balancers = self
            .load_balancers
            .values()
            .filter_map(|lb| {
                let address = lb.address?;
                let mut backends: Vec<SocketAddrV4> = self
                    .instances
                    .values()
                    .filter(|i| i.cluster == lb.cluster && i.role == Role::ControlPlane)
                    .filter(|i| i.state == InstanceState::Running && !i.deleting)
                    .map(|i| {
                        let port = i.api_port.unwrap_or(boot_check::DEFAULT_BIND_PORT);
                        SocketAddrV4::new(i.address, port)
                    })
                    .collect();
                backends.sort();
                Some(LoadBalancerPlan {
                    id: Kind::LoadBalancer.id(lb.id),
                    listen: SocketAddrV4::new(address, lb.port),
                    backends,
                })
            })
            .collect();
        MachinePlan {
            booting: ids(InstanceState::Booting),
            running: ids(InstanceState::Running),
            load_balancers,
        }
    }

    /// The ids of every instance, load balancer and managed control plane: the machines
    /// that may have a directory.
    pub fn machine_ids(&self) -> std::collections::BTreeSet<String> {
        self.instances
            .keys()
            .map(|&n| Kind::Instance.id(n))
            .chain(
                self.load_balancers
                    .keys()
                    .map(|&n| Kind::LoadBalancer.id(n)),
            )
            .chain(
                self.control_planes
                    .keys()
                    .map(|&n| Kind::ControlPlane.id(n)),
            )
            .collect()
    }

    /// What instance `id`'s machine should run; `None` unless it exists and is `booting`.
    pub fn launch_order(&self, id: &str, settings: &CloudSettings) -> Option<LaunchOrder> {
        let record = self.instances.get(&Kind::Instance.parse(id)?)?;
        if record.state != InstanceState::Booting {
            return None;
        }
        let view = instance_view(record);
        let verdict = self.boot_verdict(record, settings).map(|v| {
            let role = match v.action {
                KubeadmAction::Init => AgentRole::Init,
                KubeadmAction::Join {
                    control_plane: true,
                } => AgentRole::JoinControlPlane,
                KubeadmAction::Join {
                    control_plane: false,
                } => AgentRole::Worker,
            };
            (role, v.registers)
        });
        Some(LaunchOrder {
            id: view.id,
            name: view.name,
            provider_id: view.provider_id,
            address: record.address,
            data: BASE64.decode(&record.bootstrap_data).unwrap_or_default(),
            verdict,
        })
    }

    /// Records that instance `id`'s machine started; an `init` in a cluster without a
    /// registration makes `registers` the cluster's, as kubeadm makes a real cluster's token
    /// and CA. Returns whether anything changed.
    pub fn record_launch(&mut self, id: &str, registers: Option<LearnedSecrets>) -> bool {
        let Some(record) = Kind::Instance
            .parse(id)
            .and_then(|n| self.instances.get(&n))
        else {
            return false;
        };
        let Some(learned) = registers else {
            return false;
        };
        if self.bootstrap.contains_key(&record.cluster) {
            return false;
        }
        let cluster = record.cluster.clone();
        self.bootstrap.insert(
            cluster,
            Registration {
                token: learned.token,
                ca_cert_hash: learned.ca_cert_hash,
                previous_token: None,
            },
        );
        true
    }

    /// Applies what instance `id`'s machine reported: `booting` turns `running` on
    /// [`MachineOutcome::Ready`]; `booting` or `running` turns `failed` on
    /// [`MachineOutcome::Failed`]. Returns whether anything changed.
    pub fn settle_machine(&mut self, id: &str, outcome: MachineOutcome) -> bool {
        let Some(record) = Kind::Instance
            .parse(id)
            .and_then(|n| self.instances.get_mut(&n))
        else {
            return false;
        };
        let before = record.timer();
        let changed = match (record.state, outcome) {
            (InstanceState::Booting, MachineOutcome::Ready) => {
                record.state = InstanceState::Running;
                let data = BASE64.decode(&record.bootstrap_data).unwrap_or_default();
                record.api_port = boot_check::machine_data(&data)
                    .ok()
                    .map(|d| d.api_bind_port);
                true
            }
            (InstanceState::Booting | InstanceState::Running, MachineOutcome::Failed(reason)) => {
                record.state = InstanceState::Failed;
                record.reason = reason;
                true
            }
            _ => false,
        };
        self.index.retime(before, record.timer());
        changed
    }
}
