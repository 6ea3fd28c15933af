//! Which contract a component implements, read from its exports before anything runs, and
//! which interfaces it imports.

use std::fmt;

use wasmtime::Engine;
use wasmtime::component::Component;
use wasmtime::component::types::{ComponentExtern, ComponentItem};

/// The WIT package of the contract.
pub const CONTRACT_PACKAGE: &str = "capw:provider";

/// The newest contract version this host implements (`wit/0.3/`). Components of any
/// `0.1.x`, `0.2.x` or `0.3.x` are served, each through its own bindings: for a `0.x`
/// package, the minor version is the breaking one (Cargo's caret rule).
pub const CONTRACT_VERSION: &str = "0.3.0";

/// The contract versions this host serves, for messages.
const SERVED: &str = "capw:provider@0.1.x, @0.2.x and @0.3.x";

/// A contract version this host has bindings for (`crate::bindings`, one module each).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum ContractVersion {
    /// `capw:provider@0.1.x`.
    V0_1,
    /// `capw:provider@0.2.x`.
    V0_2,
    /// `capw:provider@0.3.x`.
    V0_3,
}

impl ContractVersion {
    /// The bindings that serve `version` (a semver string read from a component's exports).
    pub(crate) fn serving(version: &semver::Version) -> Option<Self> {
        match (version.major, version.minor) {
            (0, 1) => Some(ContractVersion::V0_1),
            (0, 2) => Some(ContractVersion::V0_2),
            (0, 3) => Some(ContractVersion::V0_3),
            _ => None,
        }
    }
}

/// An extension point, as found among a component's exports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ExtensionPoint {
    /// Exports `infrastructure`.
    Infrastructure,
    /// Exports `bootstrap`.
    Bootstrap,
    /// Exports `control-plane`.
    ControlPlane,
    /// Exports `lifecycle-hooks`.
    LifecycleHooks,
}

impl ExtensionPoint {
    /// Every extension point, in the contract's order.
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

/// What a component's type says about the contract it implements (its exports), and the
/// interfaces it imports.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ContractInfo {
    /// The contract version of its exports, e.g. `0.1.0`.
    pub version: String,
    /// The extension points it exports.
    pub exported: Vec<ExtensionPoint>,
    /// Every export name, for messages.
    pub export_names: Vec<String>,
    /// Every interface it imports (`wasi:io/streams@0.2.6`, `capw:provider/host-log@0.1.0`),
    /// as its component type declares them: what a registry artifact's description lists.
    pub import_names: Vec<String>,
}

impl ContractInfo {
    /// The contract world whose exports are exactly the component's, e.g.
    /// `capw:provider/infrastructure-provider@0.1.0` for `metadata` and one extension point,
    /// `capw:provider/provider@0.1.0` for all four.
    ///
    /// # Caveats
    /// `None` when no world matches: two or three extension points, or exports outside the
    /// contract (a component does not record the world it was built for, so it is inferred).
    pub fn world(&self) -> Option<String> {
        let prefix = format!("{CONTRACT_PACKAGE}/");
        let only_contract = self.export_names.iter().all(|name| {
            name.strip_prefix(&prefix)
                .and_then(|rest| rest.split_once('@'))
                .is_some_and(|(iface, _)| {
                    iface == "metadata"
                        || ExtensionPoint::ALL.iter().any(|p| p.interface() == iface)
                })
        });
        if !only_contract {
            return None;
        }
        let world = match self.exported.as_slice() {
            [one] => format!("{one}-provider"),
            all if all.len() == ExtensionPoint::ALL.len() => "provider".to_owned(),
            _ => return None,
        };
        Some(format!("{CONTRACT_PACKAGE}/{world}@{}", self.version))
    }
}

/// Read the contract from a compiled component's exports.
///
/// # Errors
/// A description of the mismatch when the component exports no `capw:provider` interface,
/// lacks `metadata`, mixes versions, or has a version this host does not serve.
pub(crate) fn inspect(
    engine: &Engine,
    component: &Component,
) -> Result<(ContractInfo, ContractVersion), String> {
    let ty = component.component_type();
    let (mut info, version) = from_export_names(interface_names(ty.exports(engine)))?;
    info.import_names = interface_names(ty.imports(engine));
    Ok((info, version))
}

/// The names of the interfaces (instances) among a component's imports or exports.
fn interface_names<'a>(items: impl Iterator<Item = (&'a str, ComponentExtern<'a>)>) -> Vec<String> {
    items
        .filter(|(_, item)| matches!(item.ty, ComponentItem::ComponentInstance(_)))
        .map(|(name, _)| name.to_string())
        .collect()
}

fn from_export_names(export_names: Vec<String>) -> Result<(ContractInfo, ContractVersion), String> {
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
    let Some(bindings) = ContractVersion::serving(&parsed) else {
        return Err(format!(
            "implements contract {CONTRACT_PACKAGE}@{version}; this host serves {SERVED}"
        ));
    };
    if !has_metadata {
        return Err(format!(
            "does not export {CONTRACT_PACKAGE}/metadata@{version}, which every provider must"
        ));
    }
    exported.sort();
    exported.dedup();
    Ok((
        ContractInfo {
            version,
            exported,
            export_names,
            import_names: Vec::new(),
        },
        bindings,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn finds_version_and_extension_points() {
        let (info, _) = from_export_names(names(&[
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
        for v in ["0.4.0", "0.0.1", "9.0.0", "1.0.0"] {
            let err =
                from_export_names(names(&[&format!("capw:provider/metadata@{v}")])).unwrap_err();
            assert!(err.contains(v), "{err}");
            assert!(
                err.contains("serves capw:provider@0.1.x, @0.2.x and @0.3.x"),
                "{err}"
            );
        }
    }

    #[test]
    fn each_served_version_gets_its_own_bindings() {
        let version = |v: &str| {
            from_export_names(names(&[&format!("capw:provider/metadata@{v}")]))
                .unwrap()
                .1
        };
        assert_eq!(version("0.1.0"), ContractVersion::V0_1);
        assert_eq!(version("0.1.4"), ContractVersion::V0_1);
        assert_eq!(version("0.2.0"), ContractVersion::V0_2);
        assert_eq!(version("0.2.3"), ContractVersion::V0_2);
        assert_eq!(version("0.3.0"), ContractVersion::V0_3);
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

    #[test]
    fn the_world_is_named_when_the_exports_match_one_exactly() {
        let world = |v: &[&str]| from_export_names(names(v)).unwrap().0.world();
        assert_eq!(
            world(&[
                "capw:provider/metadata@0.1.0",
                "capw:provider/bootstrap@0.1.0"
            ]),
            Some("capw:provider/bootstrap-provider@0.1.0".into())
        );
        assert_eq!(
            world(&[
                "capw:provider/metadata@0.1.2",
                "capw:provider/infrastructure@0.1.2",
                "capw:provider/bootstrap@0.1.2",
                "capw:provider/control-plane@0.1.2",
                "capw:provider/lifecycle-hooks@0.1.2",
            ]),
            Some("capw:provider/provider@0.1.2".into())
        );
        // Two extension points: no world exports just those.
        assert_eq!(
            world(&[
                "capw:provider/metadata@0.1.0",
                "capw:provider/bootstrap@0.1.0",
                "capw:provider/control-plane@0.1.0",
            ]),
            None
        );
        // An export outside the contract.
        assert_eq!(
            world(&[
                "exports",
                "capw:provider/metadata@0.1.0",
                "capw:provider/bootstrap@0.1.0",
            ]),
            None
        );
    }
}
