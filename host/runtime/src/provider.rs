//! A loaded provider: its compiled component pre-instantiated, its metadata, and one typed
//! method per contract function, each run in a fresh sandboxed instance.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};
use tracing::Instrument;
use wasmtime::component::{Component, Instance, InstancePre};

use crate::bindings::{
    Callable, ClusterSecrets, ContractFn, CurrentJoinToken, DeleteCluster, DeleteControlPlane,
    DeleteMachine, Describe, DescribeAsWritten, Exports, Generate, Handle, Kubeconfig,
    ListMachines, Plan, ReconcileCluster, ReconcileControlPlane, ReconcileMachine, RenewJoinToken,
    ValidateConfig,
};
use crate::cache::{CacheOutcome, CompileCache};
use crate::call::{ActiveCall, Caller, finish, with_deadline};
use crate::contract::{self, ContractInfo, ExtensionPoint};
use crate::error::{CallError, CallFailure, LoadError};
use crate::grants::Grants;
use crate::limits::MAX_COMPONENT_BYTES;
use crate::model::types::{CallContext, Deletion, Endpoint, MachineRef};
use crate::model::{bootstrap, control_plane, infrastructure, lifecycle_hooks, metadata};
use crate::runtime::{Runtime, Slot};
use crate::sandbox::{CallState, Redactor};

/// How a load went.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct LoadReport {
    /// Whether compiled code came from the cache.
    pub cache: CacheOutcome,
    /// Time spent compiling, or loading compiled code from the cache.
    pub compile: Duration,
    /// Time of the whole load, describe call included.
    pub total: Duration,
}

/// What the host knows about a loaded provider.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ProviderInfo {
    /// sha256 of the component's bytes, hex.
    pub digest: String,
    /// Size of the component in bytes.
    pub size: usize,
    /// The contract version it implements and what it exports and imports.
    pub contract: ContractInfo,
    /// The provider's answer to `metadata.describe`.
    pub metadata: metadata::ProviderMetadata,
    /// `metadata.config-schema`, parsed.
    pub config_schema: serde_json::Value,
    /// How its load went.
    pub load: LoadReport,
}

impl ProviderInfo {
    /// The extension points the provider implements (declared and exported).
    pub fn extension_points(&self) -> Vec<ExtensionPoint> {
        self.metadata
            .extension_points
            .iter()
            .map(|p| from_metadata(*p))
            .collect()
    }
}

fn from_metadata(p: metadata::ExtensionPoint) -> ExtensionPoint {
    match p {
        metadata::ExtensionPoint::Infrastructure => ExtensionPoint::Infrastructure,
        metadata::ExtensionPoint::Bootstrap => ExtensionPoint::Bootstrap,
        metadata::ExtensionPoint::ControlPlane => ExtensionPoint::ControlPlane,
        metadata::ExtensionPoint::LifecycleHooks => ExtensionPoint::LifecycleHooks,
    }
}

/// A provider ready to be called. Calls take `&self` and may run concurrently: each has its
/// own instance.
pub struct Provider {
    runtime: Arc<Runtime>,
    name: String,
    /// What it was loaded as (`source_name` of [`Runtime::load`]); the name observers see.
    source: String,
    pre: InstancePre<CallState>,
    exports: Exports,
    grants: Arc<Grants>,
    redactor: Redactor,
    info: ProviderInfo,
}

impl std::fmt::Debug for Provider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Provider")
            .field("name", &self.name)
            .field("digest", &self.info.digest)
            .finish_non_exhaustive()
    }
}

impl Runtime {
    /// Load a component as a provider.
    ///
    /// `source_name` names where the bytes came from (a path, a ConfigMap, an OCI reference)
    /// in errors and logs. The component is checked to be a component of a contract version
    /// this host serves, compiled (or taken from the compile cache), linked against the
    /// sandbox and pre-instantiated; the types of the contract functions it exports are
    /// checked once, in a first instance; then it is asked to describe itself.
    ///
    /// # Errors
    /// A [`LoadError`] naming the source and what is wrong with it; nothing is kept.
    pub async fn load(
        self: &Arc<Self>,
        source_name: &str,
        bytes: Arc<[u8]>,
        grants: Grants,
    ) -> Result<Provider, LoadError> {
        let started = Instant::now();
        let name = source_name.to_string();
        check_bytes(&name, &bytes)?;
        let digest = hex::encode(Sha256::digest(&bytes));
        let compile_started = Instant::now();
        let (component, cache) = {
            let runtime = self.clone();
            let digest = digest.clone();
            let bytes = bytes.clone();
            let name = name.clone();
            tokio::task::spawn_blocking(move || runtime.compile_or_load(&name, &bytes, &digest))
                .await
                .map_err(|source| LoadError::TaskLost {
                    source_name: source_name.to_string(),
                    source,
                })??
        };
        let compile = compile_started.elapsed();
        let (contract, version) =
            contract::inspect(&self.engine, &component).map_err(|detail| {
                LoadError::ContractMismatch {
                    source_name: name.clone(),
                    detail,
                }
            })?;
        let pre = self
            .linker
            .instantiate_pre(&component)
            .map_err(|source| LoadError::Link {
                source_name: name.clone(),
                source,
            })?;
        let found = Exports::find(&component, &contract, version).map_err(|detail| {
            LoadError::ContractMismatch {
                source_name: name.clone(),
                detail,
            }
        })?;
        let grants = Arc::new(grants);
        let redactor = Redactor::new(&grants);
        let exports = self
            .check_exports(&name, &pre, found, &grants, &redactor)
            .await?;
        let mut provider = Provider {
            runtime: self.clone(),
            name: name.clone(),
            source: name.clone(),
            pre,
            exports,
            redactor,
            grants,
            info: ProviderInfo {
                digest,
                size: bytes.len(),
                contract,
                metadata: placeholder_metadata(),
                config_schema: serde_json::Value::Null,
                load: LoadReport {
                    cache,
                    compile,
                    total: Duration::ZERO,
                },
            },
        };
        let described = provider.describe().await.map_err(|e| LoadError::Describe {
            source_name: name.clone(),
            source: Box::new(e),
        })?;
        provider.info.config_schema =
            check_metadata(&provider.info.contract, &described).map_err(|detail| {
                LoadError::BadMetadata {
                    source_name: name.clone(),
                    detail,
                }
            })?;
        provider.name = described.name.clone();
        provider.info.metadata = described;
        provider.info.load.total = started.elapsed();
        tracing::info!(
            provider = %provider.name,
            source = %source_name,
            digest = %provider.info.digest,
            cache = ?provider.info.load.cache,
            compile = ?provider.info.load.compile,
            "provider loaded"
        );
        Ok(provider)
    }

    /// Instantiates the component once, under the provider's limits, to check the types of
    /// the contract functions it exports; calls then skip that check.
    async fn check_exports(
        &self,
        name: &str,
        pre: &InstancePre<CallState>,
        found: Exports,
        grants: &Arc<Grants>,
        redactor: &Redactor,
    ) -> Result<Exports, LoadError> {
        let caller = Caller {
            name,
            source: name,
            observer: None,
        };
        let _slot = self.slot().await;
        let (mut call, instance) = instantiate(&self.engine, pre, caller, grants, redactor)
            .await
            .map_err(|source| LoadError::Instantiate {
                source_name: name.to_string(),
                source: Box::new(source),
            })?;
        found
            .check(&mut call.store, &instance)
            .map_err(|detail| LoadError::ContractMismatch {
                source_name: name.to_string(),
                detail,
            })?;
        Ok(found)
    }

    fn compile_or_load(
        &self,
        name: &str,
        bytes: &[u8],
        digest: &str,
    ) -> Result<(Component, CacheOutcome), LoadError> {
        let compile = || {
            self.compiles.fetch_add(1, Ordering::Relaxed);
            Component::new(&self.engine, bytes).map_err(|source| LoadError::Compile {
                source_name: name.to_string(),
                source,
            })
        };
        let Some(cache) = &self.cache else {
            return Ok((compile()?, CacheOutcome::Disabled));
        };
        let key = CompileCache::key(&self.engine, digest);
        let outcome = match cache.load(&self.engine, &key) {
            Ok(Some(component)) => {
                self.cache_hits.fetch_add(1, Ordering::Relaxed);
                return Ok((component, CacheOutcome::Hit));
            }
            Ok(None) => CacheOutcome::Miss,
            Err(reason) => {
                tracing::warn!(source = %name, %reason, "compile cache entry unusable; rebuilding");
                CacheOutcome::Rebuilt(reason)
            }
        };
        let component = compile()?;
        if let Err(e) = cache.store(&key, &component) {
            // A cache that cannot be written costs a compile next time, nothing more.
            tracing::warn!(source = %name, error = %e, "could not store compiled code in the cache");
        }
        Ok((component, outcome))
    }
}

fn check_bytes(name: &str, bytes: &[u8]) -> Result<(), LoadError> {
    if bytes.len() > MAX_COMPONENT_BYTES {
        return Err(LoadError::TooLarge {
            source_name: name.to_string(),
            size: bytes.len(),
            limit: MAX_COMPONENT_BYTES,
        });
    }
    if wasmparser::Parser::is_core_wasm(bytes) {
        return Err(LoadError::NotAComponent {
            source_name: name.to_string(),
        });
    }
    if !wasmparser::Parser::is_component(bytes) {
        return Err(LoadError::NotWasm {
            source_name: name.to_string(),
        });
    }
    Ok(())
}

fn placeholder_metadata() -> metadata::ProviderMetadata {
    metadata::ProviderMetadata {
        name: String::new(),
        version: String::new(),
        description: String::new(),
        extension_points: Vec::new(),
        config_schema: String::new(),
        capabilities: metadata::Capabilities {
            control_plane_shape: None,
            control_plane_scalable: false,
            version_upgrades: false,
            chains_upgrades: false,
        },
        requested_grants: metadata::RequestedGrants {
            http_hosts: Vec::new(),
            secrets: Vec::new(),
        },
    }
}

/// Check what `describe` said against the component's exports; returns the parsed schema.
pub(crate) fn check_metadata(
    contract: &ContractInfo,
    m: &metadata::ProviderMetadata,
) -> Result<serde_json::Value, String> {
    let valid_name = !m.name.is_empty()
        && m.name.len() <= 63
        && m.name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
    if !valid_name {
        return Err(format!(
            "name {:?} must be 1-63 lowercase letters, digits or '-'",
            m.name
        ));
    }
    for p in &m.extension_points {
        let p = from_metadata(*p);
        if !contract.exported.contains(&p) {
            return Err(format!(
                "declares extension point {p} but does not export capw:provider/{p}"
            ));
        }
    }
    let schema: serde_json::Value = serde_json::from_str(&m.config_schema)
        .map_err(|e| format!("config-schema is not JSON: {e}"))?;
    if !(schema.is_object() || schema.is_boolean()) {
        return Err("config-schema must be a JSON Schema object".into());
    }
    Ok(schema)
}

impl Provider {
    /// The provider's name from its metadata.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// What the host knows about it: digest, contract, metadata.
    pub fn info(&self) -> &ProviderInfo {
        &self.info
    }

    /// The capabilities and limits each of its calls runs with.
    pub fn grants(&self) -> &Grants {
        &self.grants
    }

    /// Whether the provider implements an extension point.
    pub fn implements(&self, point: ExtensionPoint) -> bool {
        self.info.extension_points().contains(&point)
    }

    fn caller(&self) -> Caller<'_> {
        Caller {
            name: &self.name,
            source: &self.source,
            observer: self.runtime.observer.as_deref(),
        }
    }

    /// A [`CallFailure::ContractMismatch`] when the component does not export `F`.
    fn check_exported<F: ContractFn>(&self) -> Result<(), CallError> {
        if self.exports.has::<F>() {
            return Ok(());
        }
        let interface = F::POINT.map_or(F::INTERFACE, ExtensionPoint::interface);
        Err(CallError {
            provider: self.name.clone(),
            operation: F::OPERATION,
            failure: CallFailure::ContractMismatch {
                detail: format!("the component does not export capw:provider/{interface}"),
            },
        })
    }

    /// Runs the contract function `F` in a fresh instance under the provider's deadline: the
    /// one typed call every method below goes through.
    async fn call<F: Callable>(&self, input: F::Input<'_>) -> Result<F::Output, CallError> {
        self.check_exported::<F>()?;
        // Held until the instance is gone: dropped after `call`, declared before it.
        let _slot = self.runtime.slot().await;
        let timeout = self.grants.limits.call_timeout;
        let started = Instant::now();
        let deadline = started + timeout;
        let mut call = ActiveCall::new(
            &self.runtime.engine,
            self.grants.clone(),
            self.redactor.clone(),
            deadline,
        );
        let span = self.runtime.call_span(&self.name, F::OPERATION);
        let outcome = with_deadline(deadline, async {
            let instance = self.pre.instantiate_async(&mut call.store).await?;
            self.exports
                .call::<F>(&mut call.store, &instance, input)
                .await
        })
        .instrument(span.clone())
        .await;
        let _in_span = span.enter();
        finish(
            self.caller(),
            F::OPERATION,
            call.store.data(),
            timeout,
            self.grants.limits.memory,
            started,
            outcome,
        )
    }

    /// `metadata.describe`: ask the provider again to describe itself.
    pub async fn describe(&self) -> Result<metadata::ProviderMetadata, CallError> {
        self.call::<Describe>(()).await
    }

    /// `metadata.describe`, its description as the provider wrote it (control characters and
    /// all; every other check made): for judging the answer itself, as the conformance suite
    /// does. Print the description only escaped.
    pub async fn describe_as_written(&self) -> Result<metadata::ProviderMetadata, CallError> {
        self.call::<DescribeAsWritten>(()).await.map(|m| m.0)
    }

    /// `metadata.validate-config`: `Ok(Err(errors))` when the provider rejects the config.
    pub async fn validate_config(
        &self,
        config: &str,
    ) -> Result<Result<(), Vec<metadata::FieldError>>, CallError> {
        self.call::<ValidateConfig>(config).await
    }

    /// `infrastructure.reconcile-cluster`.
    pub async fn reconcile_cluster(
        &self,
        ctx: &CallContext,
    ) -> Result<infrastructure::ClusterState, CallError> {
        self.call::<ReconcileCluster>(ctx).await
    }

    /// `infrastructure.delete-cluster`.
    pub async fn delete_cluster(&self, ctx: &CallContext) -> Result<Deletion, CallError> {
        self.call::<DeleteCluster>(ctx).await
    }

    /// `infrastructure.reconcile-machine`.
    pub async fn reconcile_machine(
        &self,
        ctx: &CallContext,
        spec: &infrastructure::MachineSpec,
    ) -> Result<infrastructure::MachineStatus, CallError> {
        self.call::<ReconcileMachine>((ctx, spec)).await
    }

    /// `infrastructure.delete-machine`.
    pub async fn delete_machine(
        &self,
        ctx: &CallContext,
        machine: &MachineRef,
    ) -> Result<Deletion, CallError> {
        self.call::<DeleteMachine>((ctx, machine)).await
    }

    /// `infrastructure.list-machines`.
    pub async fn list_machines(
        &self,
        ctx: &CallContext,
    ) -> Result<Vec<infrastructure::ListedMachine>, CallError> {
        self.call::<ListMachines>(ctx).await
    }

    /// `bootstrap.cluster-secrets`.
    pub async fn cluster_secrets(
        &self,
        ctx: &CallContext,
    ) -> Result<bootstrap::SecretsState, CallError> {
        self.call::<ClusterSecrets>(ctx).await
    }

    /// `bootstrap.generate`.
    pub async fn generate_bootstrap(
        &self,
        ctx: &CallContext,
        request: &bootstrap::BootstrapRequest,
    ) -> Result<bootstrap::BootstrapData, CallError> {
        self.call::<Generate>((ctx, request)).await
    }

    /// `bootstrap.kubeconfig`.
    pub async fn kubeconfig(
        &self,
        ctx: &CallContext,
        endpoint: &Endpoint,
        secrets: &[bootstrap::SecretItem],
    ) -> Result<String, CallError> {
        self.call::<Kubeconfig>((ctx, endpoint, secrets)).await
    }

    /// `bootstrap.current-join-token` (0.3 on): the token joins carry now. `None` without a call for
    /// a provider of an earlier contract version, which has no way to renew one.
    pub async fn current_join_token(
        &self,
        ctx: &CallContext,
        secrets: &[bootstrap::SecretItem],
    ) -> Result<Option<bootstrap::JoinToken>, CallError> {
        if !self.exports.version_has::<CurrentJoinToken>() {
            return Ok(None);
        }
        self.call::<CurrentJoinToken>((ctx, secrets)).await
    }

    /// `bootstrap.renew-join-token` (0.3 on): a fresh token for joins from now on.
    pub async fn renew_join_token(
        &self,
        ctx: &CallContext,
        secrets: &[bootstrap::SecretItem],
    ) -> Result<bootstrap::JoinToken, CallError> {
        self.call::<RenewJoinToken>((ctx, secrets)).await
    }

    /// `control-plane.plan`.
    pub async fn plan(
        &self,
        ctx: &CallContext,
        input: &control_plane::PlanInput,
    ) -> Result<control_plane::PlanOutput, CallError> {
        self.call::<Plan>((ctx, input)).await
    }

    /// `control-plane.reconcile-control-plane` (0.3 on): moves a control plane that a service
    /// runs toward `input`. A provider of an earlier version answers `unsupported` without a
    /// call.
    pub async fn reconcile_control_plane(
        &self,
        ctx: &CallContext,
        input: &control_plane::PlanInput,
    ) -> Result<control_plane::ReconcileOutput, CallError> {
        self.call::<ReconcileControlPlane>((ctx, input)).await
    }

    /// `control-plane.delete-control-plane` (0.3 on): takes a control plane that a service
    /// runs down.
    pub async fn delete_control_plane(&self, ctx: &CallContext) -> Result<Deletion, CallError> {
        self.call::<DeleteControlPlane>(ctx).await
    }

    /// `lifecycle-hooks.handle`.
    pub async fn call_hook(
        &self,
        ctx: &CallContext,
        request: &lifecycle_hooks::HookRequest,
    ) -> Result<lifecycle_hooks::HookResponse, CallError> {
        self.call::<Handle>((ctx, request)).await
    }
}

/// Several calls in one instance, one after another: what a fresh-instance call costs beyond
/// the guest's own work is paid once.
///
/// # Caveats
/// The instance's memory survives from one call to the next, so a provider could carry state
/// across them: use a session only where that is harmless (benchmarks, a batch of calls for
/// one object). After a failed call the instance may be in any state: drop the session.
pub struct Session<'p> {
    provider: &'p Provider,
    call: ActiveCall,
    instance: Instance,
    /// The pool slot of `instance`; last, so it is given back after the instance is gone.
    _slot: Slot,
}

impl Provider {
    /// Instantiate once for several calls.
    ///
    /// # Errors
    /// When instantiation fails or runs past the deadline.
    pub async fn session(&self) -> Result<Session<'_>, CallError> {
        let caller = self.caller();
        let slot = self.runtime.slot().await;
        let (call, instance) = instantiate(
            &self.runtime.engine,
            &self.pre,
            caller,
            &self.grants,
            &self.redactor,
        )
        .await?;
        Ok(Session {
            provider: self,
            call,
            instance,
            _slot: slot,
        })
    }
}

/// An instance of `pre` in a fresh store under the limits and deadline of `grants`; a failure
/// is a [`CallError`] of the operation `instantiate`.
async fn instantiate(
    engine: &wasmtime::Engine,
    pre: &InstancePre<CallState>,
    caller: Caller<'_>,
    grants: &Arc<Grants>,
    redactor: &Redactor,
) -> Result<(ActiveCall, Instance), CallError> {
    let timeout = grants.limits.call_timeout;
    let started = Instant::now();
    let deadline = started + timeout;
    let mut call = ActiveCall::new(engine, grants.clone(), redactor.clone(), deadline);
    let outcome = with_deadline(deadline, async {
        pre.instantiate_async(&mut call.store).await.map(Ok)
    })
    .await;
    let instance = finish(
        caller,
        "instantiate",
        call.store.data(),
        timeout,
        grants.limits.memory,
        started,
        outcome,
    )?;
    Ok((call, instance))
}

impl Session<'_> {
    /// Runs the contract function `F` in the session's instance under a fresh deadline.
    async fn call<F: Callable>(&mut self, input: F::Input<'_>) -> Result<F::Output, CallError> {
        let p = self.provider;
        p.check_exported::<F>()?;
        let timeout = p.grants.limits.call_timeout;
        let started = Instant::now();
        let deadline = started + timeout;
        self.call.store.data_mut().set_deadline(deadline);
        let span = p.runtime.call_span(&p.name, F::OPERATION);
        let outcome = with_deadline(
            deadline,
            p.exports
                .call::<F>(&mut self.call.store, &self.instance, input),
        )
        .instrument(span.clone())
        .await;
        let _in_span = span.enter();
        finish(
            p.caller(),
            F::OPERATION,
            self.call.store.data(),
            timeout,
            p.grants.limits.memory,
            started,
            outcome,
        )
    }

    /// `control-plane.plan` in the session's instance.
    pub async fn plan(
        &mut self,
        ctx: &CallContext,
        input: &control_plane::PlanInput,
    ) -> Result<control_plane::PlanOutput, CallError> {
        self.call::<Plan>((ctx, input)).await
    }

    /// `bootstrap.generate` in the session's instance.
    pub async fn generate_bootstrap(
        &mut self,
        ctx: &CallContext,
        request: &bootstrap::BootstrapRequest,
    ) -> Result<bootstrap::BootstrapData, CallError> {
        self.call::<Generate>((ctx, request)).await
    }

    /// `lifecycle-hooks.handle` in the session's instance.
    pub async fn call_hook(
        &mut self,
        ctx: &CallContext,
        request: &lifecycle_hooks::HookRequest,
    ) -> Result<lifecycle_hooks::HookResponse, CallError> {
        self.call::<Handle>((ctx, request)).await
    }
}
