//! `metadata.describe` and the config schema.

use capw_runtime::HttpGrant;
use capw_runtime::metadata::{ControlPlaneShape, ExtensionPoint, ProviderMetadata};

use super::Findings;
use crate::calls::Subject;
use crate::rules::id;

pub(crate) async fn run(s: &Subject<'_>, f: &mut Findings) {
    let info = s.provider.info();
    // Judged as the provider wrote it: the host keeps the description escaped.
    let first = s.record(s.provider.describe_as_written().await);
    let again = s.record(s.provider.describe_as_written().await);
    match &first {
        Ok(m) => f.problems(id::DESCRIBE_WELL_FORMED, describe_problems(m)),
        Err(e) => f.check(
            id::DESCRIBE_WELL_FORMED,
            Err(format!("describe failed: {e}")),
        ),
    }
    match (first, again) {
        (Ok(first), Ok(again)) if first == again => {
            f.set(id::DESCRIBE_DETERMINISTIC, crate::Outcome::Pass)
        }
        (Ok(first), Ok(again)) => f.check(
            id::DESCRIBE_DETERMINISTIC,
            Err(format!(
                "describe answered differently the second time: first {first:?}, then {again:?}"
            )),
        ),
        (Err(e), _) | (_, Err(e)) => f.check(
            id::DESCRIBE_DETERMINISTIC,
            Err(format!("describe failed: {e}")),
        ),
    }
    f.check(
        id::SCHEMA_WELL_FORMED,
        super::config::compile_schema(&info.config_schema).map(|_| ()),
    );
}

/// What is wrong with what `describe` said, beyond what the host refuses at load.
fn describe_problems(m: &ProviderMetadata) -> Vec<String> {
    let mut problems = Vec::new();
    if let Err(e) = semver::Version::parse(&m.version) {
        problems.push(format!(
            "version {:?} is not a semantic version: {e}",
            m.version
        ));
    }
    if m.description.trim().is_empty() || m.description.contains('\n') {
        problems.push(format!(
            "description {:?} must be one non-empty line",
            m.description
        ));
    }
    if m.extension_points.is_empty() {
        problems.push("extension-points is empty: declare at least one".into());
    }
    for (i, p) in m.extension_points.iter().enumerate() {
        if m.extension_points[..i].contains(p) {
            problems.push(format!("extension point {p:?} is declared twice"));
        }
    }
    let control_plane = m.extension_points.contains(&ExtensionPoint::ControlPlane);
    match (control_plane, m.capabilities.control_plane_shape) {
        (true, None) => problems
            .push("implements control-plane but capabilities.control-plane-shape is none".into()),
        (false, Some(shape)) => problems.push(format!(
            "capabilities.control-plane-shape is {} but control-plane is not declared",
            shape_name(shape)
        )),
        _ => {}
    }
    for host in &m.requested_grants.http_hosts {
        if let Err(e) = host.parse::<HttpGrant>() {
            problems.push(format!("requested-grants.http-hosts: {e}"));
        }
    }
    for (i, name) in m.requested_grants.secrets.iter().enumerate() {
        if name.trim().is_empty() {
            problems.push(format!("requested-grants.secrets[{i}] is empty"));
        }
    }
    problems
}

fn shape_name(shape: ControlPlaneShape) -> &'static str {
    match shape {
        ControlPlaneShape::Machines => "machines",
        ControlPlaneShape::Hosted => "hosted",
        ControlPlaneShape::Managed => "managed",
    }
}
