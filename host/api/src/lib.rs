//! capw's API objects, group `capw.dev`, version `v1alpha1`, as Rust types.
//!
//! Start with the four kinds: [`WasmProvider`] (an installed provider component and its
//! grants), [`ClusterClass`] (which provider builds each part of a cluster, with variables and
//! patches), [`Cluster`] (a cluster stamped out from a class) and [`Machine`] (one machine's
//! intent and state). Each is a `kube` custom resource with a status subresource, so the same
//! types serve the embedded local mode and Kubernetes; [`crds_yaml`] prints their CRDs.
//!
//! [`parse_manifests`] reads a multi-document YAML file into [`Object`]s, refusing unknown
//! kinds and fields with the path of the culprit; [`write_manifests`] writes them back. [`Condition`] and [`set_condition`] are the
//! Kubernetes-style conditions every status carries.
//!
//! This crate depends on serde, schemars and kube's derive only: no client, no runtime.

#![warn(missing_docs)]

mod cluster;
mod cluster_class;
mod condition;
mod crds;
mod health;
mod infrastructure;
mod json;
mod machine;
mod manifest;
pub mod names;
mod object;
mod patch;
mod provider;
mod rollout;
mod write;

pub use cluster::{
    ApiEndpoint, ClassRef, Cluster, ClusterPhase, ClusterSpec, ClusterStatus, ClusterVariable,
    ControlPlaneStatus, ControlPlaneTopology, LastRemediation, MachineDeploymentTopology,
    PoolStatus, PoolVariables, ReplicaCounters, Topology, WorkersTopology,
};
pub use cluster_class::{
    ClusterClass, ClusterClassSpec, ClusterClassStatus, ClusterClassVariable, ControlPlaneClass,
    EtcdAccess, InfrastructureConfig, MachineDeploymentClass, ProviderConfigRef, VariableSchema,
    WorkersClass,
};
pub use condition::{Condition, ConditionStatus, get_condition, is_condition_true, set_condition};
pub use crds::{CrdYamlError, crds, crds_yaml};
pub use health::{
    HealthChecks, HealthRemediation, MachineHealthCheck, RemediationTrigger, UnhealthyNodeCondition,
};
pub use infrastructure::{
    ClusterInfrastructure, ClusterInfrastructureSpec, ClusterInfrastructureStatus,
    ServiceControlPlane,
};
pub use json::JsonObject;
pub use machine::{
    Machine, MachineAddress, MachinePhase, MachineRole, MachineSpec, MachineStatus, NodeRef,
};
pub use manifest::{
    MAX_FLOW_DEPTH, ManifestError, ManifestErrorReason, parse_document, parse_manifests,
    parse_object, pod_template_images,
};
pub use object::{API_VERSION, CLUSTER_FINALIZER, CLUSTER_LABEL, KINDS, MACHINE_FINALIZER, Object};
pub use patch::{
    ClusterClassPatch, JsonPatch, PatchDefinition, PatchOp, PatchSelector, PatchTarget, ValueFrom,
};
pub use provider::{
    CONDITION_LOADED, ConfigMapSource, FileSource, Grants, OciSource, ProviderSource, PullPolicy,
    SecretGrant, SecretRef, WasmProvider, WasmProviderSpec, WasmProviderStatus,
};
pub use rollout::{
    ControlPlaneDeletion, DEFAULT_NODE_DRAIN_TIMEOUT_SECONDS, DeletionOrder, MachineDeletion,
    MachineRollout, MachineShape, RollingUpdate, RolloutStrategy, RolloutStrategyType,
};
pub use write::{WriteError, write_manifests};

/// Re-exported so callers can build metadata and timestamps without naming k8s-openapi.
pub use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
pub use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
