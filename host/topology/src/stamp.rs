//! Stamping out the desired parts (control plane, pools) from the class, patched per scope.

use capw_api::{
    ClusterClassSpec, JsonObject, MachineDeploymentTopology, MachineShape, PatchTarget,
};
use serde_json::{Value, json};

use crate::checks::{MAX_POOL_REPLICAS, check_pool_name, check_replicas};
use crate::desired::{ConfigOrigin, DesiredControlPlane, DesiredPool, ProviderConfig};
use crate::error::{Errors, TopologyErrorKind as Kind};
use crate::health::pool_health_check;
use crate::patches::{Patcher, Selected};
use crate::path::at;
use crate::rollout::{Layers, deletion_order, node_drain_timeout, pool_rollout};
use crate::variables::{BUILTIN, Variables};

/// Builds provider configs from the class, collecting errors as it goes.
pub(crate) struct Stamper<'a> {
    pub(crate) spec: &'a ClusterClassSpec,
    pub(crate) patcher: Patcher<'a>,
    /// The `builtin` variable's value for cluster-wide targets.
    pub(crate) builtin: Value,
    pub(crate) version: String,
    pub(crate) errors: Errors,
}

/// A config's provider, class config and origin.
struct Source<'s> {
    provider: &'s str,
    config: &'s JsonObject,
    path: String,
}

impl Stamper<'_> {
    /// `variables` with `builtin` added (and `extra` merged into it).
    pub(crate) fn scope(
        &self,
        mut variables: Variables,
        extra: Option<(&str, Value)>,
    ) -> Variables {
        let mut builtin = self.builtin.clone();
        if let Some((key, value)) = extra {
            builtin[key] = value;
        }
        variables.insert(BUILTIN.to_owned(), builtin);
        variables
    }

    fn config(
        &mut self,
        source: Source<'_>,
        selected: Selected<'_>,
        scope: &Variables,
        pool: Option<&str>,
    ) -> ProviderConfig {
        ProviderConfig {
            provider: source.provider.to_owned(),
            config: self
                .patcher
                .apply(selected, source.config, scope, &mut self.errors),
            origin: ConfigOrigin {
                path: source.path,
                pool: pool.map(str::to_owned),
            },
        }
    }

    /// The cluster's infrastructure config.
    pub(crate) fn infrastructure(&mut self, scope: &Variables) -> ProviderConfig {
        let infra = &self.spec.infrastructure;
        let source = Source {
            provider: &infra.provider,
            config: &infra.config,
            path: "spec.infrastructure.config".into(),
        };
        self.config(
            source,
            cluster_target(PatchTarget::Infrastructure),
            scope,
            None,
        )
    }

    /// The control plane, with its machine configs when the class has them.
    pub(crate) fn control_plane(
        &mut self,
        replicas: u32,
        topology: &capw_api::ControlPlaneTopology,
        scope: &Variables,
    ) -> DesiredControlPlane {
        let spec = self.spec;
        let cp = &spec.control_plane;
        let source = Source {
            provider: &cp.provider,
            config: &cp.config,
            path: "spec.controlPlane.config".into(),
        };
        let config = self.config(
            source,
            cluster_target(PatchTarget::ControlPlane),
            scope,
            None,
        );
        let machine_infrastructure = cp.machine_infrastructure.as_ref().map(|mi| {
            let path = "spec.controlPlane.machineInfrastructure.config".into();
            let source = Source {
                provider: &spec.infrastructure.provider,
                config: &mi.config,
                path,
            };
            self.config(
                source,
                cluster_target(PatchTarget::ControlPlaneMachineInfrastructure),
                scope,
                None,
            )
        });
        let bootstrap = cp.bootstrap.as_ref().map(|b| {
            let source = Source {
                provider: &b.provider,
                config: &b.config,
                path: "spec.controlPlane.bootstrap.config".into(),
            };
            self.config(
                source,
                cluster_target(PatchTarget::ControlPlaneBootstrap),
                scope,
                None,
            )
        });
        DesiredControlPlane {
            config,
            replicas,
            failures_tolerated: None,
            version: self.version.clone(),
            machine_infrastructure,
            bootstrap,
            machine_shape: None,
            etcd: cp.etcd.clone(),
            health_check: pool_health_check(
                &Layers {
                    class: cp.health_check.as_ref(),
                    class_path: "spec.controlPlane.healthCheck",
                    cluster: topology.health_check.as_ref(),
                    cluster_path: "spec.topology.controlPlane.healthCheck",
                },
                replicas,
                true,
                &mut self.errors,
            ),
            node_drain_timeout_seconds: (topology.deletion.as_ref())
                .and_then(|d| d.node_drain_timeout_seconds)
                .or_else(|| cp.deletion.as_ref()?.node_drain_timeout_seconds)
                .unwrap_or(capw_api::DEFAULT_NODE_DRAIN_TIMEOUT_SECONDS),
        }
    }

    /// Pool `index` of the Cluster, or `None` (reported) when its class is unknown.
    ///
    /// `earlier` are the pools before it, for the duplicate-name check.
    pub(crate) fn pool(
        &mut self,
        index: usize,
        md: &MachineDeploymentTopology,
        earlier: &[MachineDeploymentTopology],
        cluster_variables: &Variables,
    ) -> Option<DesiredPool> {
        let path = at("spec.topology.workers.machineDeployments", index);
        check_pool_name(&md.name, &format!("{path}.name"), &mut self.errors);
        if earlier.iter().any(|other| other.name == md.name) {
            let why = format!("pool name {:?} is used twice", md.name);
            self.errors
                .cluster(Kind::InvalidPoolName, format!("{path}.name"), why);
        }
        let replicas = check_replicas(
            md.replicas,
            0..=MAX_POOL_REPLICAS,
            &format!("{path}.replicas"),
            &mut self.errors,
        );
        let spec = self.spec;
        let Some((class_index, class)) = spec
            .workers
            .machine_deployments
            .iter()
            .enumerate()
            .find(|(_, c)| c.class == md.class)
        else {
            let why = format!("no worker class {:?} in the ClusterClass", md.class);
            self.errors
                .cluster(Kind::UnknownWorkerClass, format!("{path}.class"), why);
            return None;
        };
        let overrides = md
            .variables
            .as_ref()
            .map(|v| v.overrides.as_slice())
            .unwrap_or_default();
        let overrides_path = format!("{path}.variables.overrides");
        let variables = self.patcher.catalog.resolve_pool(
            cluster_variables,
            overrides,
            &overrides_path,
            &mut self.errors,
        );
        let facts = json!({"name": md.name, "class": md.class, "replicas": replicas});
        let scope = self.scope(variables.clone(), Some(("machineDeployment", facts)));
        let class_path = at("spec.workers.machineDeployments", class_index);
        let stamp = |this: &mut Self, provider: &str, config: &JsonObject, field: &str, target| {
            let path = format!("{class_path}.{field}.config");
            let selected = Selected {
                target,
                worker_class: Some(md.class.as_str()),
            };
            this.config(
                Source {
                    provider,
                    config,
                    path,
                },
                selected,
                &scope,
                Some(&md.name),
            )
        };
        let infra_config = &class.infrastructure.config;
        let infrastructure = stamp(
            self,
            &spec.infrastructure.provider,
            infra_config,
            "infrastructure",
            PatchTarget::WorkerInfrastructure,
        );
        let boot = &class.bootstrap;
        let bootstrap = stamp(
            self,
            &boot.provider,
            &boot.config,
            "bootstrap",
            PatchTarget::WorkerBootstrap,
        );
        let rollout = pool_rollout(
            &Layers {
                class: class.rollout.as_ref(),
                class_path: &format!("{class_path}.rollout"),
                cluster: md.rollout.as_ref(),
                cluster_path: &format!("{path}.rollout"),
            },
            replicas,
            &mut self.errors,
        );
        let deletion = Layers {
            class: class.deletion.as_ref(),
            class_path: &format!("{class_path}.deletion"),
            cluster: md.deletion.as_ref(),
            cluster_path: &format!("{path}.deletion"),
        };
        let deletion_order = deletion_order(&deletion);
        let node_drain_timeout_seconds = node_drain_timeout(&deletion);
        let health_check = pool_health_check(
            &Layers {
                class: class.health_check.as_ref(),
                class_path: &format!("{class_path}.healthCheck"),
                cluster: md.health_check.as_ref(),
                cluster_path: &format!("{path}.healthCheck"),
            },
            replicas,
            false,
            &mut self.errors,
        );
        Some(DesiredPool {
            name: md.name.clone(),
            class: md.class.clone(),
            replicas,
            version: self.version.clone(),
            failure_domain: md.failure_domain.clone(),
            infrastructure,
            bootstrap,
            variables,
            rollout,
            deletion_order,
            node_drain_timeout_seconds,
            shape: MachineShape::default(),
            health_check,
        })
    }

    /// The lifecycle hooks, unpatched (patches do not target hooks).
    pub(crate) fn hooks(&self) -> Vec<ProviderConfig> {
        let hooks = self.spec.lifecycle_hooks.iter().enumerate();
        hooks
            .map(|(i, hook)| ProviderConfig {
                provider: hook.provider.clone(),
                config: hook.config.clone(),
                origin: ConfigOrigin {
                    path: format!("{}.config", at("spec.lifecycleHooks", i)),
                    pool: None,
                },
            })
            .collect()
    }
}

fn cluster_target(target: PatchTarget) -> Selected<'static> {
    Selected {
        target,
        worker_class: None,
    }
}
