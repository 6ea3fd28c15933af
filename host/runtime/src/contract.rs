//! Which contract a component implements, read from its exports before anything runs.

use std::fmt;

use wasmtime::Engine;
use wasmtime::component::Component;
use wasmtime::component::types::ComponentItem;

/// The WIT package of the contract.
pub const CONTRACT_PACKAGE: &str = "capw:provider";

/// The contract version this host implements. Components of any `0.1.x` are served: for a
/// `0.x` package, the minor version is the breaking one (Cargo's caret rule).
pub const CONTRACT_VERSION: &str = "0.1.0";

/// The versions of the contract this host serves.
fn served() -> semver::VersionReq {
    semver::VersionReq {
        comparators: vec![semver::Comparator {
            op: semver::Op::Caret,
            major: 0,
            minor: Some(1),
            patch: Some(0),
            pre: semver::Prerelease::EMPTY,
        }],
    }
}

/// An extension point, as found among a component's exports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ExtensionPoint {
    Infrastructure,
    Bootstrap,
    ControlPlane,
    LifecycleHooks,
}

impl ExtensionPoint {
    pub const ALL: [ExtensionPoint; 4] = [
        ExtensionPoint::Infrastructure,
        ExtensionPoint::Bootstrap,
        ExtensionPoint::ControlPlane,
        ExtensionPoint::LifecycleHooks,
    ];

    /// The interface name in the contract, e.g. `control-plane`.
    pub fn interface(self) -> &'static str {
        match self {
            ExtensionPoint::Infrastructure => "infrastructure",
            ExtensionPoint::Bootstrap => "bootstrap",
            ExtensionPoint::ControlPlane => "control-plane",
            ExtensionPoint::LifecycleHooks => "lifecycle-hooks",
        }
    }
}

impl fmt::Display for ExtensionPoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.interface())
    }
}

/// What a component's exports say about the contract it implements.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ContractInfo {
    /// The contract version of its exports, e.g. `0.1.0`.
    pub version: String,
    /// The extension points it exports.
    pub exported: Vec<ExtensionPoint>,
    /// Every export name, for messages.
    pub export_names: Vec<String>,
}

/// Read the contract from a compiled component's exports.
///
/// # Errors
/// A description of the mismatch when the component exports no `capw:provider` interface,
/// lacks `metadata`, mixes versions, or has a version this host does not serve.
pub(crate) fn inspect(engine: &Engine, component: &Component) -> Result<ContractInfo, String> {
    let ty = component.component_type();
    let export_names: Vec<String> = ty
        .exports(engine)
        .filter(|(_, item)| matches!(item.ty, ComponentItem::ComponentInstance(_)))
        .map(|(name, _)| name.to_string())
        .collect();
    from_export_names(export_names)
}

fn from_export_names(export_names: Vec<String>) -> Result<ContractInfo, String> {
    let prefix = format!("{CONTRACT_PACKAGE}/");
    let mut version: Option<String> = None;
    let mut exported = Vec::new();
    let mut has_metadata = false;
    for name in &export_names {
        let Some(rest) = name.strip_prefix(&prefix) else {
            continue;
        };
        let (iface, v) = rest
            .split_once('@')
            .ok_or_else(|| format!("export {name} has no version"))?;
        match &version {
            None => version = Some(v.to_string()),
            Some(seen) if seen != v => {
                return Err(format!(
                    "exports mix contract versions {seen} and {v} ({name})"
                ));
            }
            Some(_) => {}
        }
        match iface {
            "metadata" => has_metadata = true,
            other => {
                if let Some(p) = ExtensionPoint::ALL.iter().find(|p| p.interface() == other) {
                    exported.push(*p);
                }
            }
        }
    }
    let Some(version) = version else {
        return Err(format!(
            "exports no {CONTRACT_PACKAGE} interface; it exports [{}]",
            export_names.join(", ")
        ));
    };
    let parsed = semver::Version::parse(&version)
        .map_err(|e| format!("contract version {version:?} is not semver: {e}"))?;
    if !served().matches(&parsed) {
        return Err(format!(
            "implements contract {CONTRACT_PACKAGE}@{version}; this host serves {CONTRACT_PACKAGE}@0.1.x"
        ));
    }
    if !has_metadata {
        return Err(format!(
            "does not export {CONTRACT_PACKAGE}/metadata@{version}, which every provider must"
        ));
    }
    exported.sort();
    exported.dedup();
    Ok(ContractInfo {
        version,
        exported,
        export_names,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn finds_version_and_extension_points() {
        let info = from_export_names(names(&[
            "capw:provider/metadata@0.1.0",
            "capw:provider/infrastructure@0.1.0",
            "capw:provider/lifecycle-hooks@0.1.0",
        ]))
        .unwrap();
        assert_eq!(info.version, "0.1.0");
        assert_eq!(
            info.exported,
            vec![
                ExtensionPoint::Infrastructure,
                ExtensionPoint::LifecycleHooks
            ]
        );
    }

    #[test]
    fn patch_versions_are_served() {
        assert!(from_export_names(names(&["capw:provider/metadata@0.1.7"])).is_ok());
    }

    #[test]
    fn other_minor_or_major_is_refused() {
        for v in ["0.2.0", "9.0.0", "1.0.0"] {
            let err =
                from_export_names(names(&[&format!("capw:provider/metadata@{v}")])).unwrap_err();
            assert!(err.contains(v), "{err}");
            assert!(err.contains("serves capw:provider@0.1.x"), "{err}");
        }
    }

    #[test]
    fn no_contract_exports_names_what_it_has() {
        let err = from_export_names(names(&["wasi:cli/run@0.2.0"])).unwrap_err();
        assert!(err.contains("wasi:cli/run@0.2.0"), "{err}");
    }

    #[test]
    fn metadata_is_required() {
        let err = from_export_names(names(&["capw:provider/infrastructure@0.1.0"])).unwrap_err();
        assert!(err.contains("metadata"), "{err}");
    }

    #[test]
    fn mixed_versions_are_refused() {
        let err = from_export_names(names(&[
            "capw:provider/metadata@0.1.0",
            "capw:provider/bootstrap@0.1.1",
        ]))
        .unwrap_err();
        assert!(err.contains("mix"), "{err}");
    }
}
