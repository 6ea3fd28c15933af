//! [`Object`]: any capw object, for code that handles all kinds alike.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use crate::{Cluster, ClusterClass, Machine, WasmProvider};

/// The `apiVersion` of every capw object.
pub const API_VERSION: &str = "capw.dev/v1alpha1";

/// Label on every object the host makes for a cluster (Machines, Secrets, the
/// ClusterInfrastructure record): the Cluster's name.
pub const CLUSTER_LABEL: &str = "capw.dev/cluster";

/// Finalizer on every Cluster the host has started on: it goes when nothing of the cluster is
/// left in the infrastructure.
pub const CLUSTER_FINALIZER: &str = "capw.dev/cluster";

/// Finalizer on every Machine: it goes when the infrastructure says the machine is deleted.
pub const MACHINE_FINALIZER: &str = "capw.dev/machine";

/// The kinds capw serves, as spelled in `kind`.
pub const KINDS: [&str; 4] = ["WasmProvider", "ClusterClass", "Cluster", "Machine"];

/// Any capw object.
#[derive(Clone, Debug, PartialEq)]
pub enum Object {
    /// A `WasmProvider`.
    WasmProvider(WasmProvider),
    /// A `ClusterClass`.
    ClusterClass(ClusterClass),
    /// A `Cluster`.
    Cluster(Cluster),
    /// A `Machine`.
    Machine(Machine),
}

impl Object {
    /// The object's `kind`.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::WasmProvider(_) => "WasmProvider",
            Self::ClusterClass(_) => "ClusterClass",
            Self::Cluster(_) => "Cluster",
            Self::Machine(_) => "Machine",
        }
    }

    /// The object's metadata.
    pub fn metadata(&self) -> &ObjectMeta {
        match self {
            Self::WasmProvider(o) => &o.metadata,
            Self::ClusterClass(o) => &o.metadata,
            Self::Cluster(o) => &o.metadata,
            Self::Machine(o) => &o.metadata,
        }
    }

    /// `metadata.name`, or `""` when unset.
    pub fn name(&self) -> &str {
        self.metadata().name.as_deref().unwrap_or_default()
    }

    /// The object as JSON, with `apiVersion` and `kind`.
    ///
    /// # Errors
    ///
    /// The encoder's complaint (not expected for capw's types).
    pub fn to_json(&self) -> Result<serde_json::Value, serde_json::Error> {
        match self {
            Self::WasmProvider(o) => serde_json::to_value(o),
            Self::ClusterClass(o) => serde_json::to_value(o),
            Self::Cluster(o) => serde_json::to_value(o),
            Self::Machine(o) => serde_json::to_value(o),
        }
    }

    /// `metadata.namespace`, if set.
    pub fn namespace(&self) -> Option<&str> {
        self.metadata().namespace.as_deref()
    }
}
