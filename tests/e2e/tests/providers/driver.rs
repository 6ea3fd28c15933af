//! A hand-written stand-in for the reconciler: drives the three reference providers through a
//! cluster's life, one call at a time, retrying what the contract says to retry.
//!
//! It keeps only what a reconciler would persist (machines with their idempotency keys, the
//! cluster's secrets) and honours every answer: `in-progress` requeue hints, retryable errors
//! and their `retry-after`, deadline-exceeded calls (retried with the same key).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use capw_runtime::bootstrap::{BootstrapRequest, ControlPlaneMember, SecretItem, SecretsState};
use capw_runtime::control_plane::{Member, PlanInput, PlanOutput, Step};
use capw_runtime::infrastructure::{
    ClusterInfrastructure, ClusterState, MachinePhase, MachineSpec, MachineStatus,
};
use capw_runtime::types::{
    CallContext, ClusterRef, Deletion, Endpoint, KubernetesVersion, MachineRef, MachineRole,
};
use capw_runtime::{CallError, CallFailure, Provider};
use capw_simcloud::SimCloudHandle;
use capw_simcloud::model::Inventory;

use crate::support::{self, SIM_TOKEN};

/// How long the driver waits for one step (a machine to run, a deletion) before failing.
const STEP_TIMEOUT: Duration = Duration::from_secs(120);

/// The wait after a retryable error that names no `retry-after`.
const DEFAULT_BACKOFF: Duration = Duration::from_millis(50);

/// A machine the driver created, as a reconciler would record it before the first create call.
#[derive(Clone, Debug)]
pub struct Machine {
    pub machine: MachineRef,
    pub role: MachineRole,
    /// The key every create and delete call for this machine carries.
    pub key: String,
    pub version: KubernetesVersion,
    pub failure_domain: Option<String>,
    pub created_at: u64,
    pub status: Option<MachineStatus>,
}

/// What the driver met on the way: retries by kind.
#[derive(Debug, Default)]
pub struct Retries {
    pub retryable: AtomicU32,
    pub throttled: AtomicU32,
    pub deadline: AtomicU32,
}

pub struct Driver {
    pub cluster: ClusterRef,
    pub infra: Provider,
    pub bootstrap: Provider,
    pub control_plane: Provider,
    pub infra_config: serde_json::Value,
    pub bootstrap_config: serde_json::Value,
    pub control_plane_config: serde_json::Value,
    pub version: KubernetesVersion,
    pub infrastructure: Option<ClusterInfrastructure>,
    pub secrets: Vec<SecretItem>,
    pub machines: BTreeMap<String, Machine>,
    pub retries: Arc<Retries>,
    next_machine: u32,
    clock: u64,
}

impl Driver {
    /// A driver for cluster `name` on `sim`, with the providers loaded in `runtime`.
    pub async fn new(
        runtime: &Arc<capw_runtime::Runtime>,
        sim: &SimCloudHandle,
        name: &str,
    ) -> Driver {
        Driver {
            cluster: ClusterRef {
                namespace: "default".into(),
                name: name.into(),
                uid: format!("uid-{name}"),
            },
            infra: support::sim_infra(runtime, sim).await,
            bootstrap: support::kubeadm_bootstrap(runtime).await,
            control_plane: support::kubeadm_control_plane(runtime).await,
            infra_config: serde_json::json!({ "endpoint": sim.base_url() }),
            bootstrap_config: serde_json::json!({}),
            control_plane_config: serde_json::json!({}),
            version: KubernetesVersion {
                major: 1,
                minor: 34,
                patch: 1,
            },
            infrastructure: None,
            secrets: Vec::new(),
            machines: BTreeMap::new(),
            retries: Arc::default(),
            next_machine: 0,
            clock: 1_767_225_600,
        }
    }

    fn ctx(&self, config: &serde_json::Value, key: &str) -> CallContext {
        CallContext {
            cluster: self.cluster.clone(),
            config: config.to_string(),
            idempotency_key: key.into(),
            deadline_ms: 10_000,
        }
    }

    /// Runs `call` until it answers or fails for good; retryable errors and deadlines are
    /// retried after their `retry-after` (or a short backoff).
    async fn retrying<T, F, Fut>(&self, what: &str, mut call: F) -> T
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, CallError>>,
    {
        let started = Instant::now();
        loop {
            let error = match call().await {
                Ok(answer) => return answer,
                Err(error) => error,
            };
            let wait = match error.failure() {
                CallFailure::Provider(e) if e.retryable => {
                    let counter = if e.retry_after_ms.is_some() {
                        &self.retries.throttled
                    } else {
                        &self.retries.retryable
                    };
                    counter.fetch_add(1, Ordering::Relaxed);
                    e.retry_after_ms
                        .map_or(DEFAULT_BACKOFF, |ms| Duration::from_millis(ms.into()))
                }
                CallFailure::DeadlineExceeded { .. } => {
                    self.retries.deadline.fetch_add(1, Ordering::Relaxed);
                    DEFAULT_BACKOFF
                }
                _ => panic!("{what}: {error}"),
            };
            assert!(
                started.elapsed() < STEP_TIMEOUT,
                "{what}: still failing after {STEP_TIMEOUT:?}: {error}"
            );
            tokio::time::sleep(wait).await;
        }
    }

    /// Reconciles the cluster's infrastructure until it is ready.
    pub async fn ensure_infrastructure(&mut self) -> ClusterInfrastructure {
        let ctx = self.ctx(&self.infra_config, &format!("{}-infra", self.cluster.uid));
        let started = Instant::now();
        loop {
            let state = self
                .retrying("reconcile-cluster", || self.infra.reconcile_cluster(&ctx))
                .await;
            match state {
                ClusterState::Ready(infra) => {
                    self.infrastructure = Some(infra.clone());
                    return infra;
                }
                ClusterState::InProgress(p) => {
                    assert!(started.elapsed() < STEP_TIMEOUT, "cluster: {}", p.message);
                    tokio::time::sleep(requeue(p.requeue_after_ms)).await;
                }
            }
        }
    }

    /// Asks the bootstrap provider for the cluster's secrets until they are ready.
    pub async fn ensure_secrets(&mut self) -> Vec<SecretItem> {
        if !self.secrets.is_empty() {
            return self.secrets.clone();
        }
        let ctx = self.ctx(
            &self.bootstrap_config,
            &format!("{}-secrets", self.cluster.uid),
        );
        let started = Instant::now();
        loop {
            let state = self
                .retrying("cluster-secrets", || self.bootstrap.cluster_secrets(&ctx))
                .await;
            match state {
                SecretsState::Ready(items) => {
                    self.secrets = items.clone();
                    return items;
                }
                SecretsState::InProgress(p) => {
                    assert!(started.elapsed() < STEP_TIMEOUT, "secrets: {}", p.message);
                    tokio::time::sleep(requeue(p.requeue_after_ms)).await;
                }
            }
        }
    }

    pub fn endpoint(&self) -> Endpoint {
        self.infrastructure
            .as_ref()
            .expect("infrastructure reconciled first")
            .control_plane_endpoint
            .clone()
            .expect("the infrastructure's endpoint")
    }

    fn failure_domains(&self) -> Vec<String> {
        self.infrastructure
            .as_ref()
            .map(|i| {
                i.failure_domains
                    .iter()
                    .filter(|d| d.control_plane)
                    .map(|d| d.name.clone())
                    .collect()
            })
            .unwrap_or_default()
    }

    fn control_plane_machines(&self) -> impl Iterator<Item = &Machine> {
        self.machines
            .values()
            .filter(|m| m.role != MachineRole::Worker)
    }

    fn running(m: &Machine) -> bool {
        m.status
            .as_ref()
            .is_some_and(|s| s.phase == MachinePhase::Running)
    }

    /// The control-plane plan for `replicas` at the driver's version.
    pub async fn plan(&self, replicas: u32) -> PlanOutput {
        let members = self
            .control_plane_machines()
            .map(|m| Member {
                machine: m.machine.clone(),
                version: m.version,
                failure_domain: m.failure_domain.clone(),
                ready: Self::running(m),
                created_at: m.created_at,
                deleting: false,
                etcd: capw_runtime::control_plane::EtcdMembership::Unknown,
                out_of_date: Vec::new(),
                unhealthy: Vec::new(),
            })
            .collect();
        let input = PlanInput {
            version: self.version,
            replicas,
            members,
            failure_domains: self.failure_domains(),
            endpoint: self.infrastructure.as_ref().map(|_| self.endpoint()),
            failures_tolerated: None,
            objects: Vec::new(),
        };
        let config = self.control_plane_config.clone();
        let ctx = self.ctx(&config, &format!("{}-plan", self.cluster.uid));
        self.retrying("plan", || self.control_plane.plan(&ctx, &input))
            .await
    }

    /// Applies control-plane plans until the plan is `none`; returns the steps taken.
    pub async fn converge_control_plane(&mut self, replicas: u32) -> Vec<String> {
        let mut steps = Vec::new();
        loop {
            let plan = self.plan(replicas).await;
            match plan.step {
                Step::None => return steps,
                Step::CreateMachine(create) => {
                    let role = if create.init {
                        MachineRole::Init
                    } else {
                        MachineRole::JoinControlPlane
                    };
                    let name = self
                        .create_machine(role, "control-plane", create.failure_domain)
                        .await;
                    steps.push(format!("create {name}"));
                }
                Step::DeleteMachine(machine) => {
                    self.delete_machine(&machine.name).await;
                    steps.push(format!("delete {}", machine.name));
                }
                Step::Wait(p) => tokio::time::sleep(requeue(p.requeue_after_ms)).await,
                Step::ApplyManifests(_) => panic!("a machine control plane applies no manifests"),
                Step::RemoveEtcdMember(m) => panic!("no provider here asks to remove {m:?}"),
            }
            assert!(steps.len() < 50, "the plan does not converge: {steps:?}");
        }
    }

    /// Creates a machine: its record and key first, then bootstrap data and the infrastructure
    /// machine, until it runs. Returns its name.
    pub async fn create_machine(
        &mut self,
        role: MachineRole,
        pool: &str,
        failure_domain: Option<String>,
    ) -> String {
        self.next_machine += 1;
        self.clock += 1;
        let name = format!("{}-{pool}-{}", self.cluster.name, self.next_machine);
        let machine = Machine {
            machine: MachineRef {
                name: name.clone(),
                uid: format!("uid-{name}"),
            },
            role,
            key: format!("{}-{name}", self.cluster.uid),
            version: self.version,
            failure_domain,
            created_at: self.clock,
            status: None,
        };
        self.machines.insert(name.clone(), machine.clone());

        let members: Vec<ControlPlaneMember> = if role == MachineRole::Init {
            Vec::new()
        } else {
            self.control_plane_machines()
                .filter(|m| Self::running(m))
                .map(|m| ControlPlaneMember {
                    name: m.machine.name.clone(),
                    address: m
                        .status
                        .as_ref()
                        .and_then(|s| s.addresses.first())
                        .map(|a| a.address.clone())
                        .unwrap_or_default(),
                })
                .collect()
        };
        let request = BootstrapRequest {
            machine: machine.machine.clone(),
            role,
            version: machine.version,
            endpoint: self.endpoint(),
            secrets: self.ensure_secrets().await,
            control_plane_members: members,
            join: None,
        };
        let bootstrap_ctx = self.ctx(&self.bootstrap_config, &machine.key);
        let data = self
            .retrying("generate", || {
                self.bootstrap.generate_bootstrap(&bootstrap_ctx, &request)
            })
            .await;
        let spec = MachineSpec {
            machine: machine.machine.clone(),
            role,
            pool: pool.into(),
            version: machine.version,
            failure_domain: machine.failure_domain.clone(),
            bootstrap_data: data.data,
        };
        let status = self.wait_running(&machine.key, &spec).await;
        self.machines.get_mut(&name).unwrap().status = Some(status);
        name
    }

    /// Reconciles a machine until it runs; a failed machine fails the test with its message.
    async fn wait_running(&self, key: &str, spec: &MachineSpec) -> MachineStatus {
        let ctx = self.ctx(&self.infra_config, key);
        let started = Instant::now();
        loop {
            let status = self
                .retrying("reconcile-machine", || {
                    self.infra.reconcile_machine(&ctx, spec)
                })
                .await;
            match status.phase {
                MachinePhase::Running => return status,
                MachinePhase::Failed => {
                    panic!("{} failed: {}", spec.machine.name, status.message)
                }
                _ => {
                    assert!(
                        started.elapsed() < STEP_TIMEOUT,
                        "{} not running: {status:?}",
                        spec.machine.name
                    );
                    tokio::time::sleep(requeue(status.requeue_after_ms)).await;
                }
            }
        }
    }

    /// Adds `count` workers to pool `pool`.
    pub async fn add_workers(&mut self, pool: &str, count: usize) -> Vec<String> {
        let domains = self.failure_domains();
        let mut names = Vec::new();
        for i in 0..count {
            let domain = (!domains.is_empty()).then(|| domains[i % domains.len()].clone());
            names.push(self.create_machine(MachineRole::Worker, pool, domain).await);
        }
        names
    }

    /// Deletes one machine until the infrastructure says it is gone.
    pub async fn delete_machine(&mut self, name: &str) {
        let machine = self.machines.get(name).expect("a known machine").clone();
        let ctx = self.ctx(&self.infra_config, &machine.key);
        let started = Instant::now();
        loop {
            let answer = self
                .retrying("delete-machine", || {
                    self.infra.delete_machine(&ctx, &machine.machine)
                })
                .await;
            match answer {
                Deletion::Deleted => break,
                Deletion::InProgress(p) => {
                    assert!(started.elapsed() < STEP_TIMEOUT, "{name}: {}", p.message);
                    tokio::time::sleep(requeue(p.requeue_after_ms)).await;
                }
            }
        }
        self.machines.remove(name);
    }

    /// Deletes every machine, workers first, then the cluster's infrastructure.
    pub async fn delete_cluster(&mut self) {
        let mut names: Vec<(bool, String)> = self
            .machines
            .values()
            .map(|m| (m.role != MachineRole::Worker, m.machine.name.clone()))
            .collect();
        names.sort();
        for (_, name) in names {
            self.delete_machine(&name).await;
        }
        let ctx = self.ctx(&self.infra_config, &format!("{}-infra", self.cluster.uid));
        let started = Instant::now();
        loop {
            let answer = self
                .retrying("delete-cluster", || self.infra.delete_cluster(&ctx))
                .await;
            match answer {
                Deletion::Deleted => return,
                Deletion::InProgress(p) => {
                    assert!(started.elapsed() < STEP_TIMEOUT, "cluster: {}", p.message);
                    tokio::time::sleep(requeue(p.requeue_after_ms)).await;
                }
            }
        }
    }
}

fn requeue(ms: impl Into<Option<u32>>) -> Duration {
    Duration::from_millis(ms.into().unwrap_or(100).clamp(10, 2_000).into())
}

/// simcloud's inventory, read over its API.
pub async fn inventory(sim: &SimCloudHandle) -> Inventory {
    capw_test_support::simcloud_inventory(&sim.base_url(), SIM_TOKEN).await
}
