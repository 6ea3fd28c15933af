//! The CustomResourceDefinitions of every capw kind, for `capw crds`.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::CustomResourceExt;

use crate::{Cluster, ClusterClass, ClusterInfrastructure, Machine, WasmProvider};

/// The CRD could not be written as YAML.
#[derive(Debug, thiserror::Error)]
#[error("cannot write CRD {name} as YAML")]
pub struct CrdYamlError {
    /// Name of the CRD.
    pub name: String,
    /// The encoder's complaint.
    #[source]
    pub source: serde_yaml_ng::Error,
}

/// The CRDs of every capw kind, in a stable order (providers, classes, clusters, machines,
/// cluster infrastructure records).
pub fn crds() -> Vec<CustomResourceDefinition> {
    vec![
        WasmProvider::crd(),
        ClusterClass::crd(),
        Cluster::crd(),
        Machine::crd(),
        ClusterInfrastructure::crd(),
    ]
}

/// [`crds`] as one multi-document YAML string, ready for `kubectl apply -f -`.
///
/// # Guarantees
///
/// The output is deterministic: the same types always give the same bytes, so a committed
/// copy can be compared in CI.
///
/// # Errors
///
/// [`CrdYamlError`] if a CRD cannot be encoded (not expected for these types).
pub fn crds_yaml() -> Result<String, CrdYamlError> {
    let mut out = String::new();
    for crd in crds() {
        let yaml = serde_yaml_ng::to_string(&crd).map_err(|source| CrdYamlError {
            name: crd.metadata.name.clone().unwrap_or_default(),
            source,
        })?;
        out.push_str("---\n");
        out.push_str(&yaml);
    }
    Ok(out)
}
