//! A provider that misbehaves on purpose: the sandbox's test fixture.
//!
//! The config picks one behaviour, e.g. `{"behaviour": "grow-memory"}` or
//! `{"behaviour": "huge-result", "megabytes": 64}`. Each runs in `infrastructure.reconcile-cluster`;
//! `describe` and `validate-config` stay healthy so that the host loads the component and
//! accepts the config, and the misbehaviour happens where the host's call limits must catch it.
//!
//! The `garbage-*` behaviours reach further: as a bootstrap, control-plane or lifecycle-hooks
//! provider too, the component puts [`garbage`] in every text field, every name, or the error
//! of that point's answers. Its other behaviours keep those points healthy and minimal.
//! Never install it anywhere but a test.

#![warn(missing_docs)]

use std::hint::black_box;
use std::time::Duration;

use capw_sdk::bootstrap::{
    BootstrapData, BootstrapFormat, BootstrapRequest, SecretItem, SecretsState,
};
use capw_sdk::control_plane::{ControlPlaneStatus, MachineToCreate, Plan, PlanInput, Step};
use capw_sdk::infrastructure::{
    ClusterInfrastructure, ClusterState, ListedMachine, MachinePhase, MachineSpec, MachineStatus,
};
use capw_sdk::lifecycle_hooks::{HookRequest, HookResponse};
use capw_sdk::metadata::ControlPlaneShape;
use capw_sdk::types::{
    Address, AddressKind, Condition, ConditionStatus, Deletion, Endpoint, ErrorCode, InProgress,
    MachineRef, ProviderError,
};
use capw_sdk::{
    Bootstrap, Context, ControlPlane, Infrastructure, LifecycleHooks, Provider, Validate,
};
use schemars::JsonSchema;
use serde::Deserialize;

/// What `reconcile-cluster` does.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(tag = "behaviour", rename_all = "kebab-case", deny_unknown_fields)]
pub enum Behaviour {
    /// Answer ready at `healthy.test:6443`.
    Healthy,
    /// Spin forever: the epoch deadline must stop it.
    Loop,
    /// Allocate and touch 1 MiB chunks forever: the memory limit must stop it.
    GrowMemory,
    /// Recurse without end: the stack limit must stop it.
    Recurse,
    /// Panic (a trap in the component).
    Panic,
    /// Answer with an endpoint host of this many MiB: the host must bound what it reads back.
    HugeResult {
        /// Size of the host name, in MiB.
        megabytes: u32,
    },
    /// Read a file: there is no filesystem, so this must fail.
    ReadFile {
        /// The path to read.
        path: String,
    },
    /// Open a TCP connection: there are no sockets, so this must fail.
    OpenSocket {
        /// `host:port` to connect to.
        address: String,
    },
    /// GET a URL through the SDK's HTTP client: allowed only for granted hosts.
    Http {
        /// The URL to get.
        url: String,
    },
    /// Read a secret: allowed only when granted.
    Secret {
        /// The grant name.
        name: String,
    },
    /// GET a URL with no timeout of its own; answer ready at `gated.test:6443` once it
    /// answers 2xx, a retryable error otherwise. While the server holds the request, the call
    /// hangs until the host's deadline stops it; once it answers, the provider recovers.
    Gated {
        /// The URL to get.
        url: String,
    },
    /// Sleep, then answer healthy: a slow call must not delay others.
    Sleep {
        /// How long, in milliseconds.
        millis: u64,
    },
    /// Print this many 100-character lines to stdout, then answer healthy: the host must bound
    /// what it keeps.
    StdoutFlood {
        /// Number of lines.
        lines: u32,
    },
    /// [`garbage`] in every free-text field of every answer (condition reasons and messages,
    /// a machine's message, in-progress reasons and messages) and in log records, with healthy
    /// names: the host must keep and print that text capped and escaped. As infrastructure,
    /// the cluster still comes up; as bootstrap, control plane or hook, the answer is
    /// `in-progress` (or `hold`) with that text, so the cluster waits on it.
    GarbageText,
    /// [`garbage`] in the names of each answer: a machine's provider id, address and failure
    /// domain; a cluster secret's name; the failure domain of a control-plane machine to
    /// create and the endpoint host; the condition type of a hook's hold. The host must refuse
    /// the answer, naming the field, and keep none of it.
    GarbageNames,
    /// Fail `reconcile-cluster` (and, as the other points, `cluster-secrets`, `plan` and
    /// `handle`) with [`garbage`] as the error's message.
    GarbageError,
}

/// A megabyte of text a terminal would obey: it clears the screen, sets the window title,
/// moves the cursor to the start of the line and forges a `Ready=True` line, then repeats a
/// red-colour escape for the rest.
pub fn garbage() -> String {
    let mut text = String::from("\r\u{1b}[2J\u{1b}]0;pwned\u{7}\nReady=True\r\n");
    while text.len() < MIB {
        text.push_str("x\u{1b}[31m\r");
    }
    text
}

/// An in-progress answer with [`garbage`] for its reason, message and conditions.
fn garbage_progress() -> InProgress {
    let mut progress = InProgress::new(garbage(), garbage());
    progress.conditions = garbage_conditions();
    progress
}

fn garbage_error() -> ProviderError {
    ProviderError::retryable(ErrorCode::Unavailable, garbage())
}

fn garbage_conditions() -> Vec<Condition> {
    vec![Condition {
        type_: "Garbage".into(),
        status: ConditionStatus::True,
        reason: garbage(),
        message: garbage(),
    }]
}

/// The hostile provider.
pub struct Hostile;

impl Provider for Hostile {
    type Config = Behaviour;
    const NAME: &'static str = "hostile";
    const DESCRIPTION: &'static str =
        "Misbehaves on purpose, as configured; a sandbox test fixture.";
}

/// Every behaviour parses; there is no rule beyond the schema.
impl Validate for Behaviour {}

impl Infrastructure for Hostile {
    fn reconcile_cluster(ctx: &Context<Behaviour>) -> Result<ClusterState, ProviderError> {
        match &ctx.config {
            Behaviour::Healthy | Behaviour::GarbageNames => Ok(ready("healthy.test")),
            Behaviour::GarbageText => {
                capw_sdk::log::warn(&garbage(), &[("garbage", &garbage())]);
                let mut state = ready("healthy.test");
                if let ClusterState::Ready(r) = &mut state {
                    r.conditions = garbage_conditions();
                }
                Ok(state)
            }
            Behaviour::GarbageError => Err(garbage_error()),
            Behaviour::Loop => spin(),
            Behaviour::GrowMemory => grow_memory(),
            Behaviour::Recurse => {
                let depth = recurse(0);
                Ok(ready(&depth.to_string()))
            }
            Behaviour::Panic => panic!("hostile panic"),
            Behaviour::HugeResult { megabytes } => {
                let len = usize::try_from(*megabytes)
                    .unwrap_or(usize::MAX)
                    .saturating_mul(MIB);
                Ok(ready(&"x".repeat(len)))
            }
            Behaviour::ReadFile { path } => match std::fs::read_to_string(path) {
                // Hand the content back, so that a leak shows in the test.
                Ok(content) => Ok(ready(&content)),
                Err(e) => Err(internal(format!("read {path}: {e}"))),
            },
            Behaviour::OpenSocket { address } => match std::net::TcpStream::connect(address) {
                Ok(_) => Ok(ready("connected")),
                Err(e) => Err(internal(format!("connect {address}: {e}"))),
            },
            Behaviour::Http { url } => match capw_sdk::http::Request::get(url).send() {
                Ok(response) => Ok(ready(&format!("status {}", response.status))),
                // HttpError's message for a denied host says "denied".
                Err(e) => Err(ProviderError::permanent(
                    ErrorCode::Unavailable,
                    format!("GET {url}: {e}"),
                )),
            },
            Behaviour::Secret { name } => match capw_sdk::secrets::get(name) {
                Ok(bytes) => Ok(ready(&String::from_utf8_lossy(&bytes))),
                Err(e) => Err(ProviderError::permanent(
                    ErrorCode::NotGranted,
                    format!("secret {name}: {e:?}"),
                )),
            },
            Behaviour::Gated { url } => match capw_sdk::http::Request::get(url).send() {
                Ok(response) if (200..300).contains(&response.status) => Ok(ready("gated.test")),
                Ok(response) => Err(ProviderError::retryable(
                    ErrorCode::Unavailable,
                    format!("GET {url}: status {}", response.status),
                )),
                Err(e) => Err(ProviderError::retryable(
                    ErrorCode::Unavailable,
                    format!("GET {url}: {e}"),
                )),
            },
            Behaviour::Sleep { millis } => {
                std::thread::sleep(Duration::from_millis(*millis));
                Ok(ready("healthy.test"))
            }
            Behaviour::StdoutFlood { lines } => {
                let line = "x".repeat(100);
                for _ in 0..*lines {
                    println!("{line}");
                }
                Ok(ready("healthy.test"))
            }
        }
    }

    fn delete_cluster(_ctx: &Context<Behaviour>) -> Result<Deletion, ProviderError> {
        Ok(Deletion::Deleted)
    }

    /// Every machine runs at once: the misbehaviour is in `reconcile-cluster` only, so a
    /// cluster whose misbehaviour stops can go on to Ready.
    fn reconcile_machine(
        ctx: &Context<Behaviour>,
        spec: MachineSpec,
    ) -> Result<MachineStatus, ProviderError> {
        let mut status = MachineStatus {
            provider_id: Some(format!("hostile://{}", spec.machine.name)),
            phase: MachinePhase::Running,
            addresses: vec![Address {
                kind: AddressKind::Hostname,
                address: format!("{}.hostile.test", spec.machine.name),
            }],
            failure_domain: spec.failure_domain,
            message: String::new(),
            requeue_after_ms: None,
            conditions: Vec::new(),
        };
        match ctx.config {
            Behaviour::GarbageText => {
                status.message = garbage();
                status.conditions = garbage_conditions();
            }
            Behaviour::GarbageNames => {
                status.provider_id = Some(garbage());
                status.addresses[0].address = garbage();
                status.failure_domain = Some(garbage());
            }
            _ => {}
        }
        Ok(status)
    }

    fn delete_machine(
        _ctx: &Context<Behaviour>,
        _machine: MachineRef,
    ) -> Result<Deletion, ProviderError> {
        Ok(Deletion::Deleted)
    }

    fn list_machines(_ctx: &Context<Behaviour>) -> Result<Vec<ListedMachine>, ProviderError> {
        Ok(Vec::new())
    }
}

/// Healthy: one secret, raw (empty) bootstrap data, a minimal kubeconfig.
impl Bootstrap for Hostile {
    fn cluster_secrets(ctx: &Context<Behaviour>) -> Result<SecretsState, ProviderError> {
        match ctx.config {
            Behaviour::GarbageText => Ok(SecretsState::InProgress(garbage_progress())),
            Behaviour::GarbageNames => Ok(SecretsState::Ready(vec![SecretItem {
                name: garbage(),
                data: b"hostile".to_vec(),
            }])),
            Behaviour::GarbageError => Err(garbage_error()),
            _ => Ok(SecretsState::Ready(vec![SecretItem {
                name: "ca.crt".into(),
                data: b"hostile".to_vec(),
            }])),
        }
    }

    fn generate(
        _ctx: &Context<Behaviour>,
        _request: BootstrapRequest,
    ) -> Result<BootstrapData, ProviderError> {
        Ok(BootstrapData {
            format: BootstrapFormat::Raw,
            data: Vec::new(),
        })
    }

    fn kubeconfig(
        _ctx: &Context<Behaviour>,
        _endpoint: Endpoint,
        _secrets: Vec<SecretItem>,
    ) -> Result<String, ProviderError> {
        Ok("apiVersion: v1\nkind: Config\n".into())
    }
}

/// Healthy: one machine at a time up to the replicas asked, all counted ready.
impl ControlPlane for Hostile {
    const SHAPE: ControlPlaneShape = ControlPlaneShape::Machines;

    fn plan(ctx: &Context<Behaviour>, input: PlanInput) -> Result<Plan, ProviderError> {
        let live =
            u32::try_from(input.members.iter().filter(|m| !m.deleting).count()).unwrap_or(u32::MAX);
        let mut plan = Plan {
            step: if live < input.replicas {
                Step::CreateMachine(MachineToCreate {
                    init: live == 0,
                    version: input.version,
                    failure_domain: None,
                })
            } else {
                Step::None
            },
            status: ControlPlaneStatus {
                initialized: live > 0,
                ready: live > 0,
                version: Some(input.version),
                endpoint: input.endpoint,
                conditions: Vec::new(),
                failures_tolerated: None,
            },
            replicas: live,
            ready_replicas: live,
            up_to_date_replicas: live,
            certificates: Vec::new(),
            shared_datastore: None,
        };
        match ctx.config {
            Behaviour::GarbageText => {
                plan.step = Step::Wait(garbage_progress());
                plan.status.conditions = garbage_conditions();
            }
            Behaviour::GarbageNames => {
                plan.step = Step::CreateMachine(MachineToCreate {
                    init: live == 0,
                    version: input.version,
                    failure_domain: Some(garbage()),
                });
                plan.status.endpoint = Some(Endpoint {
                    host: garbage(),
                    port: 6443,
                });
            }
            Behaviour::GarbageError => return Err(garbage_error()),
            _ => {}
        }
        Ok(plan)
    }
}

/// Healthy: proceed.
impl LifecycleHooks for Hostile {
    fn handle(
        ctx: &Context<Behaviour>,
        _request: HookRequest,
    ) -> Result<HookResponse, ProviderError> {
        match ctx.config {
            Behaviour::GarbageText => Ok(HookResponse::Hold(garbage_progress())),
            Behaviour::GarbageNames => {
                let mut progress = InProgress::new("Holding", "a condition of a garbage type");
                progress.conditions = vec![Condition {
                    type_: garbage(),
                    status: ConditionStatus::False,
                    reason: "Garbage".into(),
                    message: String::new(),
                }];
                Ok(HookResponse::Hold(progress))
            }
            Behaviour::GarbageError => Err(garbage_error()),
            _ => Ok(HookResponse::Proceed),
        }
    }
}

capw_sdk::export_provider!(Hostile);

const MIB: usize = 1 << 20;

fn ready(host: &str) -> ClusterState {
    ClusterState::Ready(ClusterInfrastructure {
        control_plane_endpoint: Some(Endpoint {
            host: host.to_owned(),
            port: 6443,
        }),
        failure_domains: Vec::new(),
        conditions: Vec::new(),
    })
}

fn internal(message: String) -> ProviderError {
    ProviderError::permanent(ErrorCode::Internal, message)
}

/// Never returns. `black_box` hides the counter from the optimiser, which would otherwise be
/// free to treat a side-effect-free loop as dead code.
fn spin() -> ! {
    let mut counter = 0u64;
    loop {
        counter = black_box(counter.wrapping_add(1));
    }
}

/// Never returns: allocates until the allocator fails, which aborts the instance. Every page is
/// written, so the memory is really committed, and every chunk is kept.
fn grow_memory() -> ! {
    let mut chunks: Vec<Vec<u8>> = Vec::new();
    loop {
        let mut chunk = vec![0u8; MIB];
        for page in chunk.iter_mut().step_by(4096) {
            *page = 1;
        }
        chunks.push(black_box(chunk));
        black_box(&mut chunks);
    }
}

/// Recurses until the wasm stack runs out. Everything stays in wasm locals, so the native
/// stack the host bounds fills up (an array here would fill Rust's shadow stack in linear
/// memory first, which ends in an out-of-bounds trap instead). The work after the call keeps
/// it from becoming a loop (no tail call); the depth check can never be true in practice, but
/// the compiler cannot know that.
#[inline(never)]
fn recurse(depth: u64) -> u64 {
    if depth == u64::MAX {
        return 0;
    }
    let below = recurse(depth.wrapping_add(1));
    below.rotate_left(7) ^ depth
}
