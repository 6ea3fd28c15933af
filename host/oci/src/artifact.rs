//! The Wasm OCI artifact layout: media types, the config document and the manifest.
//!
//! A component is one layer of [`WASM_LAYER_MEDIA_TYPE`]; the config blob is a
//! [`WasmConfig`] of [`WASM_CONFIG_MEDIA_TYPE`], which is also the manifest's `artifactType`
//! (the OCI image spec's rule for artifacts with a non-empty config). The config's
//! [`ComponentDescription`] names the component's interfaces, so that a registry or a client
//! can tell what a component offers and needs without downloading it.

use std::collections::BTreeMap;

use oci_client::manifest::{OCI_IMAGE_MEDIA_TYPE, OciDescriptor, OciImageManifest};
use serde::{Deserialize, Serialize};

use crate::cache::sha256_digest;

/// Media type of the config blob of a Wasm artifact.
pub const WASM_CONFIG_MEDIA_TYPE: &str = "application/vnd.wasm.config.v0+json";
/// Media type of the layer holding the component.
pub const WASM_LAYER_MEDIA_TYPE: &str = "application/wasm";
/// Manifest media type accepted and written.
pub const MANIFEST_MEDIA_TYPE: &str = OCI_IMAGE_MEDIA_TYPE;

/// Annotation: the name the provider reports about itself.
pub const ANNOTATION_PROVIDER_NAME: &str = "dev.capw.provider.name";
/// Annotation: the version the provider reports about itself.
pub const ANNOTATION_PROVIDER_VERSION: &str = "dev.capw.provider.version";
/// Annotation: the `capw:provider` contract version the component was built against.
pub const ANNOTATION_CONTRACT_VERSION: &str = "dev.capw.contract.version";
/// Annotation: the extension points the component implements, comma-separated.
pub const ANNOTATION_EXTENSION_POINTS: &str = "dev.capw.provider.extension-points";
/// Annotation (OCI): a descriptor's file name or a manifest's title. On the component layer
/// it is the file name clients that unpack artifacts (oras) write the layer to.
pub const ANNOTATION_TITLE: &str = "org.opencontainers.image.title";

/// The config document of a Wasm artifact.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WasmConfig {
    /// When it was pushed (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created: Option<String>,
    /// Always `wasm`.
    pub architecture: String,
    /// `wasip2` for components.
    pub os: String,
    /// The digests of the manifest's layers, in order.
    #[serde(default)]
    pub layer_digests: Vec<String>,
    /// The component's interfaces. The layout asks for it when `os` is `wasip2`; artifacts
    /// of older pushes and of other tools may lack it, and are read all the same.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub component: Option<ComponentDescription>,
}

impl WasmConfig {
    /// The config of a component artifact whose one layer has digest `layer_digest`, pushed
    /// now.
    pub fn new(layer_digest: &str, component: Option<ComponentDescription>) -> Self {
        WasmConfig {
            created: Some(jiff::Timestamp::now().to_string()),
            architecture: "wasm".into(),
            os: "wasip2".into(),
            layer_digests: vec![layer_digest.to_owned()],
            component,
        }
    }
}

/// The `component` object of a [`WasmConfig`]: the interfaces a component exports and
/// imports, by their full names (`capw:provider/infrastructure@0.1.0`,
/// `wasi:io/streams@0.2.6`), and the world it targets when that is known.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ComponentDescription {
    /// The interfaces it exports.
    #[serde(default)]
    pub exports: Vec<String>,
    /// The interfaces it imports.
    #[serde(default)]
    pub imports: Vec<String>,
    /// The world it targets, e.g. `capw:provider/provider@0.1.0`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
}

/// What a push says about a component besides its bytes: the manifest's annotations and the
/// config's component description.
///
/// A map of annotations converts into a description without a component object, as pushes
/// wrote before the config carried one.
#[derive(Debug, Clone, Default)]
pub struct ArtifactDescription {
    /// Annotations of the manifest (see the `ANNOTATION_*` constants).
    pub annotations: BTreeMap<String, String>,
    /// The config's `component` object.
    pub component: Option<ComponentDescription>,
}

impl From<BTreeMap<String, String>> for ArtifactDescription {
    fn from(annotations: BTreeMap<String, String>) -> Self {
        ArtifactDescription {
            annotations,
            component: None,
        }
    }
}

/// The config blob and manifest for one component.
pub(crate) struct Artifact {
    pub config: Vec<u8>,
    pub manifest: OciImageManifest,
}

impl Artifact {
    /// Describes a component of `component_len` bytes whose digest is `layer_digest`, with
    /// `description`'s annotations on the manifest and its component object in the config.
    pub(crate) fn new(
        component_len: usize,
        layer_digest: &str,
        description: ArtifactDescription,
    ) -> Result<Self, serde_json::Error> {
        let ArtifactDescription {
            annotations,
            component,
        } = description;
        let config = serde_json::to_vec(&WasmConfig::new(layer_digest, component))?;
        let manifest = OciImageManifest {
            schema_version: 2,
            media_type: Some(MANIFEST_MEDIA_TYPE.into()),
            config: OciDescriptor {
                media_type: WASM_CONFIG_MEDIA_TYPE.into(),
                digest: sha256_digest(&config),
                size: config.len() as i64,
                ..OciDescriptor::default()
            },
            layers: vec![OciDescriptor {
                media_type: WASM_LAYER_MEDIA_TYPE.into(),
                digest: layer_digest.to_owned(),
                size: component_len as i64,
                annotations: Some(BTreeMap::from([(
                    ANNOTATION_TITLE.to_owned(),
                    layer_title(&annotations),
                )])),
                ..OciDescriptor::default()
            }],
            subject: None,
            artifact_type: Some(WASM_CONFIG_MEDIA_TYPE.into()),
            annotations: (!annotations.is_empty()).then_some(annotations),
        };
        Ok(Artifact { config, manifest })
    }
}

/// The file name of the component layer: `<provider name>.wasm`, after the provider name
/// annotation, else `component.wasm`. Only the name's own characters are kept (letters,
/// digits, `-`, `_`, `.`), so that a client writing the layer to that name stays in its
/// directory.
fn layer_title(annotations: &BTreeMap<String, String>) -> String {
    let name: String = annotations
        .get(ANNOTATION_PROVIDER_NAME)
        .map(|n| {
            n.chars()
                .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
                .collect::<String>()
        })
        .unwrap_or_default();
    let name = name.trim_start_matches('.');
    if name.is_empty() {
        "component.wasm".to_owned()
    } else {
        format!("{name}.wasm")
    }
}

/// The one component layer of `manifest`, or why there is none.
pub(crate) fn component_layer(manifest: &OciImageManifest) -> Result<&OciDescriptor, String> {
    let mut wasm = manifest
        .layers
        .iter()
        .filter(|l| l.media_type == WASM_LAYER_MEDIA_TYPE);
    match (wasm.next(), wasm.next()) {
        (Some(layer), None) => Ok(layer),
        (None, _) => Err(format!(
            "no layer of media type {WASM_LAYER_MEDIA_TYPE} (layers: {})",
            manifest
                .layers
                .iter()
                .map(|l| l.media_type.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )),
        (Some(_), Some(_)) => Err(format!("more than one {WASM_LAYER_MEDIA_TYPE} layer")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manifest_follows_the_wasm_artifact_layout() {
        let digest = sha256_digest(b"\0asm");
        let annotations = BTreeMap::from([(ANNOTATION_PROVIDER_NAME.into(), "x".into())]);
        let a = Artifact::new(4, &digest, annotations.into()).unwrap();
        let json: serde_json::Value = serde_json::to_value(&a.manifest).unwrap();
        assert_eq!(json["artifactType"], WASM_CONFIG_MEDIA_TYPE);
        assert_eq!(json["config"]["mediaType"], WASM_CONFIG_MEDIA_TYPE);
        assert_eq!(json["layers"][0]["mediaType"], WASM_LAYER_MEDIA_TYPE);
        assert_eq!(json["layers"][0]["digest"], digest.as_str());
        assert_eq!(json["annotations"][ANNOTATION_PROVIDER_NAME], "x");
        assert_eq!(json["layers"][0]["annotations"][ANNOTATION_TITLE], "x.wasm");
        let config: WasmConfig = serde_json::from_slice(&a.config).unwrap();
        assert_eq!(config.layer_digests, vec![digest]);
        assert_eq!(config.component, None);
        assert_eq!(component_layer(&a.manifest).unwrap().size, 4);
    }

    #[test]
    fn the_config_carries_the_component_description() {
        let component = ComponentDescription {
            exports: vec!["capw:provider/metadata@0.1.0".into()],
            imports: vec!["wasi:io/streams@0.2.6".into()],
            target: Some("capw:provider/provider@0.1.0".into()),
        };
        let description = ArtifactDescription {
            annotations: BTreeMap::new(),
            component: Some(component.clone()),
        };
        let a = Artifact::new(4, &sha256_digest(b"x"), description).unwrap();
        let json: serde_json::Value = serde_json::from_slice(&a.config).unwrap();
        assert_eq!(json["os"], "wasip2");
        assert_eq!(json["layerDigests"][0], sha256_digest(b"x").as_str());
        assert_eq!(
            json["component"],
            serde_json::json!({
                "exports": ["capw:provider/metadata@0.1.0"],
                "imports": ["wasi:io/streams@0.2.6"],
                "target": "capw:provider/provider@0.1.0",
            })
        );
        let config: WasmConfig = serde_json::from_slice(&a.config).unwrap();
        assert_eq!(config.component, Some(component));
    }

    #[test]
    fn configs_without_a_component_object_are_read() {
        // As older pushes and other tools write them: no `component`, no `created`.
        let config: WasmConfig = serde_json::from_str(
            r#"{"architecture":"wasm","os":"wasip2","layerDigests":["sha256:00"]}"#,
        )
        .unwrap();
        assert_eq!(config.component, None);
        // A component object without a target, as when the world is unknown.
        let config: WasmConfig = serde_json::from_str(
            r#"{"architecture":"wasm","os":"wasip2","component":{"exports":["a:b/c@1.0.0"],"imports":[],"target":null}}"#,
        )
        .unwrap();
        assert_eq!(config.component.unwrap().target, None);
    }

    #[test]
    fn the_layer_title_is_a_plain_file_name() {
        let title = |name: Option<&str>| {
            let annotations = name
                .map(|n| BTreeMap::from([(ANNOTATION_PROVIDER_NAME.to_owned(), n.to_owned())]))
                .unwrap_or_default();
            layer_title(&annotations)
        };
        assert_eq!(title(Some("sim-infra")), "sim-infra.wasm");
        assert_eq!(title(None), "component.wasm");
        assert_eq!(title(Some("../../etc/passwd")), "etcpasswd.wasm");
        assert_eq!(title(Some("/")), "component.wasm");
    }

    #[test]
    fn a_manifest_without_a_wasm_layer_is_named() {
        let mut a = Artifact::new(4, &sha256_digest(b"x"), BTreeMap::new().into()).unwrap();
        a.manifest.layers[0].media_type = "application/vnd.oci.image.layer.v1.tar".into();
        let err = component_layer(&a.manifest).unwrap_err();
        assert!(
            err.contains("application/vnd.oci.image.layer.v1.tar"),
            "{err}"
        );
    }
}
