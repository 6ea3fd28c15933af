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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cluster_crd_has_the_printer_columns_status_and_a_schema() {
        let crd = Cluster::crd();
        let version = &crd.spec.versions[0];
        let columns: Vec<(&str, &str)> = version
            .additional_printer_columns
            .iter()
            .flatten()
            .map(|c| (c.name.as_str(), c.json_path.as_str()))
            .collect();
        assert_eq!(
            columns,
            [
                ("Phase", ".status.phase"),
                ("Version", ".spec.topology.version"),
                ("CP Ready", ".status.controlPlane.readyReplicas"),
                ("CP Desired", ".status.controlPlane.desiredReplicas"),
                ("Workers Ready", ".status.workersReadyReplicas"),
                ("Workers Desired", ".status.workersDesiredReplicas"),
                ("Age", ".metadata.creationTimestamp"),
            ]
        );
        let subresources = version.subresources.as_ref().expect("subresources");
        assert!(subresources.status.is_some(), "status subresource");
        let schema = version
            .schema
            .as_ref()
            .and_then(|s| s.open_api_v3_schema.as_ref())
            .expect("an OpenAPI v3 schema");
        let spec = &schema.properties.as_ref().expect("properties")["spec"];
        assert_eq!(
            spec.required.as_deref(),
            Some(&["topology".to_string()][..])
        );
    }

    #[test]
    fn every_kind_has_a_status_subresource() {
        for crd in crds() {
            for version in &crd.spec.versions {
                assert!(
                    version
                        .subresources
                        .as_ref()
                        .is_some_and(|s| s.status.is_some()),
                    "{:?} {} has no status subresource",
                    crd.metadata.name,
                    version.name
                );
            }
        }
    }
}
