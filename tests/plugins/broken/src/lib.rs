//! A provider that breaks rules of the contract on purpose: the conformance suite's fixture.
//!
//! With `{"breaks": []}` it keeps every rule, like a small stateless reference provider: every
//! extension point, answers derived from the call's input. Each entry of `breaks` bends it one
//! way, e.g. `{"breaks": ["not-idempotent"]}` gives a new machine for every call with the same
//! idempotency key; the suite must then fail the rule that names that promise. Never install it
//! anywhere but a test.

#![warn(missing_docs)]

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use capw_sdk::bootstrap::{
    BootstrapData, BootstrapFormat, BootstrapRequest, JoinToken, SecretItem, SecretsState,
};
use capw_sdk::control_plane::{
    ControlPlaneStatus, EtcdMembership, MachineToCreate, Plan, PlanInput, Step,
};
use capw_sdk::infrastructure::{
    ClusterInfrastructure, ClusterState, ListedMachine, MachinePhase, MachineSpec, MachineStatus,
};
use capw_sdk::lifecycle_hooks::{HookRequest, HookResponse};
use capw_sdk::metadata::{ControlPlaneShape, FieldError};
use capw_sdk::types::{
    Address, AddressKind, Condition, ConditionStatus, Deletion, Endpoint, ErrorCode, InProgress,
    MachineRef, ProviderError,
};
use capw_sdk::{
    Bootstrap, Context, ControlPlane, Infrastructure, LifecycleHooks, Provider, Validate,
};
use schemars::JsonSchema;
use serde::Deserialize;

/// One way to break the contract.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Break {
    /// validate-config refuses every config, the example included.
    RejectExample,
    /// validate-config reports a bad `label` at the document (`""`) instead of `/label`.
    NoFieldPaths,
    /// validate-config accepts a `label` of any type.
    AcceptGarbage,
    /// reconcile-machine reports a new provider id on every call with the same key.
    NotIdempotent,
    /// reconcile-cluster reports a new endpoint port on every call.
    EndpointChanges,
    /// reconcile-cluster answers in-progress forever.
    NeverReady,
    /// In-progress answers without a requeue hint: machines, deletions, holds, waits.
    NoRequeueHint,
    /// delete-machine and delete-cluster fail when there is nothing to delete.
    DeleteGoneFails,
    /// list-machines lists one key twice.
    ListDuplicates,
    /// list-machines fails with a retryable `invalid-input` that carries a hint, and hooks
    /// with a permanent error that carries one.
    InconsistentRetryFlag,
    /// reconcile-cluster sleeps for a minute: past any sane deadline.
    Slow,
    /// plan and generate put the time of day in their answers.
    Nondeterministic,
    /// plan deletes a machine that is not a member and creates init machines next to members.
    BadSteps,
    /// plan deletes the machine of a member etcd lists instead of taking it out of etcd.
    DeletesEtcdMembers,
    /// cluster-secrets names two items alike, generate fails for workers, kubeconfig is empty.
    BrokenBootstrap,
    /// renew-join-token answers the current token again instead of a new one.
    RenewsSameId,
}

/// The broken provider's config.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BrokenConfig {
    /// The rules to break.
    #[serde(default)]
    pub breaks: Vec<Break>,
    /// A free label. Typed by hand in `validate` (the schema says string), so that the
    /// provider decides the path of its error.
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub label: Option<serde_json::Value>,
}

impl BrokenConfig {
    fn breaks(&self, b: Break) -> bool {
        self.breaks.contains(&b)
    }
}

type Ctx<'call> = Context<'call, BrokenConfig>;

fn broken(ctx: &Ctx, b: Break) -> bool {
    ctx.config.breaks(b)
}

/// Nanoseconds of the wall clock: what makes a broken answer differ from call to call.
fn now_nanos() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default()
}

fn progress(ctx: &Ctx, reason: &str) -> InProgress {
    let p = InProgress::new(reason, "working on it");
    if broken(ctx, Break::NoRequeueHint) {
        InProgress {
            requeue_after_ms: 0,
            ..p
        }
    } else {
        p.requeue_after(Duration::from_millis(100))
    }
}

/// The broken provider.
pub struct Broken;

impl Provider for Broken {
    type Config = BrokenConfig;
    const NAME: &'static str = "broken";
    const DESCRIPTION: &'static str =
        "Breaks the contract on purpose, as configured; a conformance test fixture.";
}

impl Validate for BrokenConfig {
    fn validate(&self) -> Result<(), Vec<FieldError>> {
        if self.breaks(Break::RejectExample) {
            return Err(vec![FieldError::new("", "refused, as configured")]);
        }
        match &self.label {
            None | Some(serde_json::Value::Null | serde_json::Value::String(_)) => Ok(()),
            Some(_) if self.breaks(Break::AcceptGarbage) => Ok(()),
            Some(_) if self.breaks(Break::NoFieldPaths) => {
                Err(vec![FieldError::new("", "something is wrong somewhere")])
            }
            Some(other) => Err(vec![FieldError::new(
                "/label",
                format!("must be a string, not {other}"),
            )]),
        }
    }
}

impl Infrastructure for Broken {
    fn reconcile_cluster(ctx: &Ctx) -> Result<ClusterState, ProviderError> {
        if broken(ctx, Break::Slow) {
            std::thread::sleep(Duration::from_secs(60));
        }
        if broken(ctx, Break::NeverReady) {
            return Ok(ClusterState::InProgress(progress(ctx, "NeverReady")));
        }
        let port = if broken(ctx, Break::EndpointChanges) {
            u16::try_from(now_nanos() % 60_000).unwrap_or(1) + 1_024
        } else {
            6443
        };
        Ok(ClusterState::Ready(ClusterInfrastructure {
            control_plane_endpoint: Some(Endpoint {
                host: format!("{}.broken.test", ctx.cluster().name),
                port,
            }),
            failure_domains: Vec::new(),
            conditions: Vec::new(),
        }))
    }

    fn delete_cluster(ctx: &Ctx) -> Result<Deletion, ProviderError> {
        if broken(ctx, Break::DeleteGoneFails) {
            return Err(ProviderError::permanent(
                ErrorCode::Conflict,
                "no such cluster",
            ));
        }
        if broken(ctx, Break::NoRequeueHint) {
            return Ok(Deletion::InProgress(progress(ctx, "Deleting")));
        }
        Ok(Deletion::Deleted)
    }

    fn reconcile_machine(ctx: &Ctx, spec: MachineSpec) -> Result<MachineStatus, ProviderError> {
        let mut id = format!("broken://{}/{}", ctx.cluster().name, ctx.idempotency_key());
        if broken(ctx, Break::NotIdempotent) {
            id.push_str(&format!("-{}", now_nanos()));
        }
        let no_hint = broken(ctx, Break::NoRequeueHint);
        Ok(MachineStatus {
            provider_id: Some(id),
            phase: if no_hint {
                MachinePhase::Provisioning
            } else {
                MachinePhase::Running
            },
            addresses: vec![Address {
                kind: AddressKind::Hostname,
                address: spec.machine.name,
            }],
            failure_domain: spec.failure_domain,
            message: String::new(),
            requeue_after_ms: None,
            conditions: Vec::new(),
        })
    }

    fn delete_machine(ctx: &Ctx, machine: MachineRef) -> Result<Deletion, ProviderError> {
        if broken(ctx, Break::DeleteGoneFails) {
            return Err(ProviderError::permanent(
                ErrorCode::Conflict,
                format!("machine {} does not exist", machine.name),
            ));
        }
        Ok(Deletion::Deleted)
    }

    fn list_machines(ctx: &Ctx) -> Result<Vec<ListedMachine>, ProviderError> {
        if broken(ctx, Break::InconsistentRetryFlag) {
            return Err(ProviderError {
                code: ErrorCode::InvalidInput,
                message: "retry the same bad input, as configured".into(),
                retryable: true,
                retry_after_ms: Some(1000),
            });
        }
        if broken(ctx, Break::ListDuplicates) {
            let twin = |n: &str| ListedMachine {
                idempotency_key: "orphan-key".into(),
                provider_id: format!("broken://{}/{n}", ctx.cluster().name),
                machine_name: n.into(),
                phase: MachinePhase::Running,
            };
            return Ok(vec![twin("a"), twin("b")]);
        }
        Ok(Vec::new())
    }
}

impl Bootstrap for Broken {
    fn cluster_secrets(ctx: &Ctx) -> Result<SecretsState, ProviderError> {
        let item = |name: &str| SecretItem {
            name: name.into(),
            data: format!("{name} of {}", ctx.cluster().uid).into_bytes(),
        };
        let mut items = vec![
            item("ca.crt"),
            item("ca.key"),
            SecretItem {
                name: JOIN_TOKEN_ITEM.into(),
                data: b"abcdef.0123456789abcdef".to_vec(),
            },
        ];
        if broken(ctx, Break::BrokenBootstrap) {
            items.push(item("ca.key"));
        }
        Ok(SecretsState::Ready(items))
    }

    fn generate(ctx: &Ctx, request: BootstrapRequest) -> Result<BootstrapData, ProviderError> {
        if broken(ctx, Break::BrokenBootstrap)
            && request.role == capw_sdk::types::MachineRole::Worker
        {
            return Err(ProviderError::unsupported("workers"));
        }
        let mut data = format!(
            "#cloud-config\n# {} {} {}:{}\n",
            request.machine.name, request.role, request.endpoint.host, request.endpoint.port
        );
        if broken(ctx, Break::Nondeterministic) {
            data.push_str(&format!("# generated at {}\n", now_nanos()));
        }
        Ok(BootstrapData {
            format: BootstrapFormat::CloudConfig,
            data: data.into_bytes(),
        })
    }

    /// The token in its item, `<id>.<secret>`.
    fn current_join_token(
        _ctx: &Ctx,
        secrets: Vec<SecretItem>,
    ) -> Result<Option<JoinToken>, ProviderError> {
        Ok(stored_token(&secrets).map(|(id, secret)| join_token(id, secret)))
    }

    /// A token whose id and secret are the current ones, each letter and digit moved one
    /// place on: new, and the same for the same input.
    fn renew_join_token(ctx: &Ctx, secrets: Vec<SecretItem>) -> Result<JoinToken, ProviderError> {
        let (id, secret) = stored_token(&secrets).ok_or_else(|| {
            ProviderError::permanent(
                ErrorCode::InvalidInput,
                "no join token in the cluster's secrets",
            )
        })?;
        if broken(ctx, Break::RenewsSameId) {
            return Ok(join_token(id, secret));
        }
        Ok(join_token(next(&id), next(&secret)))
    }

    fn kubeconfig(
        ctx: &Ctx,
        endpoint: Endpoint,
        _secrets: Vec<SecretItem>,
    ) -> Result<String, ProviderError> {
        if broken(ctx, Break::BrokenBootstrap) {
            return Ok(String::new());
        }
        Ok(format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: {}\n  cluster:\n    server: https://{}:{}\n",
            ctx.cluster().name,
            endpoint.host,
            endpoint.port
        ))
    }
}

/// The secret item holding the join token.
const JOIN_TOKEN_ITEM: &str = "join-token";

/// The token stored in `secrets`, as (id, secret).
fn stored_token(secrets: &[SecretItem]) -> Option<(String, String)> {
    let item = secrets.iter().find(|i| i.name == JOIN_TOKEN_ITEM)?;
    let text = std::str::from_utf8(&item.data).ok()?;
    let (id, secret) = text.split_once('.')?;
    Some((id.to_owned(), secret.to_owned()))
}

fn join_token(id: String, secret: String) -> JoinToken {
    JoinToken {
        item: JOIN_TOKEN_ITEM.into(),
        id,
        secret,
        ttl_seconds: 3600,
        extra_groups: Vec::new(),
    }
}

/// Each character of `text` moved one place on in `[a-z0-9]`.
fn next(text: &str) -> String {
    const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
    text.bytes()
        .map(|b| {
            let at = ALPHABET.iter().position(|a| *a == b).unwrap_or(0);
            char::from(ALPHABET[(at + 1) % ALPHABET.len()])
        })
        .collect()
}

impl ControlPlane for Broken {
    const SHAPE: ControlPlaneShape = ControlPlaneShape::Machines;
    const SCALABLE: bool = true;
    const VERSION_UPGRADES: bool = true;

    fn plan(ctx: &Ctx, input: PlanInput) -> Result<Plan, ProviderError> {
        let members = u32::try_from(input.members.len()).unwrap_or(u32::MAX);
        let bad = broken(ctx, Break::BadSteps);
        let step = if bad && members > 0 {
            if members > input.replicas {
                Step::DeleteMachine(MachineRef {
                    name: "not-a-member".into(),
                    uid: "not-a-member".into(),
                })
            } else {
                Step::CreateMachine(MachineToCreate {
                    init: true,
                    version: input.version,
                    failure_domain: None,
                })
            }
        } else if broken(ctx, Break::NoRequeueHint) {
            Step::Wait(progress(ctx, "Waiting"))
        } else if members < input.replicas {
            Step::CreateMachine(MachineToCreate {
                init: members == 0,
                version: input.version,
                failure_domain: None,
            })
        } else if members > input.replicas {
            let first = &input.members[0];
            if first.etcd == EtcdMembership::Member && !broken(ctx, Break::DeletesEtcdMembers) {
                Step::RemoveEtcdMember(first.machine.clone())
            } else {
                Step::DeleteMachine(first.machine.clone())
            }
        } else {
            Step::None
        };
        let mut conditions = Vec::new();
        if broken(ctx, Break::Nondeterministic) {
            conditions.push(Condition::new(
                "Planned",
                ConditionStatus::True,
                "Planned",
                format!("planned at {}", now_nanos()),
            ));
        }
        Ok(Plan {
            step,
            status: ControlPlaneStatus {
                initialized: members > 0,
                ready: members > 0,
                version: Some(input.version),
                endpoint: input.endpoint,
                conditions,
                failures_tolerated: None,
            },
            replicas: members,
            ready_replicas: members,
            up_to_date_replicas: members,
            certificates: Vec::new(),
            shared_datastore: None,
        })
    }
}

impl LifecycleHooks for Broken {
    fn handle(ctx: &Ctx, _request: HookRequest) -> Result<HookResponse, ProviderError> {
        if broken(ctx, Break::InconsistentRetryFlag) {
            return Err(ProviderError {
                code: ErrorCode::Unavailable,
                message: "a permanent error with a retry hint, as configured".into(),
                retryable: false,
                retry_after_ms: Some(500),
            });
        }
        if broken(ctx, Break::NoRequeueHint) {
            return Ok(HookResponse::Hold(progress(ctx, "Holding")));
        }
        Ok(HookResponse::Proceed)
    }
}

capw_sdk::export_provider!(Broken);
