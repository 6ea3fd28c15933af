//! Admission: the checks of a reconcile pass, run on an object before it is stored.
//!
//! Both modes call [`Executor::admit`]: `capw apply` for every object of its manifests, the
//! Kubernetes mode's validating webhook for every create and update. What it refuses a pass
//! would have blocked on; the message is the one the pass would have shown, naming the field.
//!
//! | Kind | Checked |
//! |---|---|
//! | every kind | the schema (unknown fields, types) and the names (RFC 1123) |
//! | `WasmProvider` | the OCI reference and digest, each `http` grant, secret grants |
//! | `ClusterClass` | variable schemas, patch selectors and operations; `controlPlane.machineInfrastructure` against the control-plane provider's shape; on update, that every Cluster of the class still computes |
//! | `Cluster` | its class exists; topology, variables and patches; every config against its provider's schema and `validate-config`; no downgrade and no skipped minor version; on update, a replica change only for a scalable control plane and a version change only for one that upgrades (the provider's capabilities); the control-plane provider's plan for the desired replicas |
//!
//! An update that leaves `spec` as it was (finalizers, labels, annotations) is always
//! admitted, so that nothing the host writes itself is ever refused, and neither is an object
//! being deleted.

use std::collections::BTreeSet;

use capw_api::{Cluster, ClusterClass, Object, ProviderSource, WasmProvider};
use capw_runtime::HttpGrant;
use capw_runtime::metadata::{Capabilities, ControlPlaneShape};
use kube::Resource as _;
use serde_json::Value;

use capw_text::error_chain as chain;

use crate::executor::Executor;
use crate::pass::actions::control_plane::plan;
use crate::pass::convert::core_version;
use crate::pass::env::Env;
use crate::pass::observe;
use crate::pass::validate::{Unanswered, class_of, desired_with_class};
use crate::store::decode;

/// Why an object is refused: every problem found, each `<Kind> <field path>: <what>`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}", .problems.join("; "))]
pub struct Refusal {
    /// The problems, in the order found; never empty.
    pub problems: Vec<String>,
}

impl Refusal {
    fn of(problems: Vec<String>) -> Result<(), Refusal> {
        if problems.is_empty() {
            Ok(())
        } else {
            Err(Refusal { problems })
        }
    }
}

impl Executor {
    /// Checks `object` (a create, or an update of `old`) as a reconcile pass would, against
    /// what the store holds and the providers loaded now. A provider that is not loaded, or
    /// whose call fails rather than judges, refuses nothing: the pass reports it.
    ///
    /// # Errors
    ///
    /// [`Refusal`] with every problem found; a store that cannot be read is one of them.
    pub async fn admit(&self, object: &Value, old: Option<&Value>) -> Result<(), Refusal> {
        let env = self.env();
        let parsed = capw_api::parse_object(object.clone()).map_err(|reason| Refusal {
            problems: vec![format!("{} {reason}", kind_of(object))],
        })?;
        let unchanged = old.is_some_and(|old| old.get("spec") == object.get("spec"));
        let deleting = parsed.metadata().deletion_timestamp.is_some();
        if unchanged || deleting {
            return Ok(());
        }
        match parsed {
            Object::WasmProvider(wp) => Refusal::of(provider_problems(&wp)),
            Object::ClusterClass(class) => Refusal::of(class_problems(env, &class, old).await),
            Object::Cluster(cluster) => Refusal::of(cluster_problems(env, cluster, old).await),
            _ => Ok(()),
        }
    }
}

fn kind_of(object: &Value) -> &str {
    object
        .get("kind")
        .and_then(Value::as_str)
        .unwrap_or("object")
}

/// What is wrong with a WasmProvider on its own.
fn provider_problems(wp: &WasmProvider) -> Vec<String> {
    let mut problems = Vec::new();
    let mut problem = |path: &str, why: String| {
        problems.push(format!("WasmProvider spec.{path}: {why}"));
    };
    match &wp.spec.source {
        ProviderSource::Oci(oci) => {
            if let Err(e) = capw_oci::registry_of(&oci.reference) {
                problem("source.oci.reference", chain(&e));
            }
            if let Some(digest) = &oci.digest
                && let Err(e) = capw_oci::check_digest(digest)
            {
                problem("source.oci.digest", e.to_string());
            }
            if oci.refresh_interval_seconds == Some(0) {
                problem(
                    "source.oci.refreshIntervalSeconds",
                    "must be at least 1".into(),
                );
            }
        }
        ProviderSource::File(file) if file.path.trim().is_empty() => {
            problem("source.file.path", "must not be empty".into());
        }
        ProviderSource::ConfigMap(cm) if cm.key.is_empty() => {
            problem("source.configMap.key", "must not be empty".into());
        }
        _ => {}
    }
    let grants = &wp.spec.grants;
    for (i, http) in grants.http.iter().enumerate() {
        if let Err(e) = http.parse::<HttpGrant>() {
            problem(&format!("grants.http[{i}]"), e.to_string());
        }
    }
    let mut names = BTreeSet::new();
    for (i, secret) in grants.secrets.iter().enumerate() {
        if !names.insert(secret.name.as_str()) {
            let why = format!("{:?} is granted twice", secret.name);
            problem(&format!("grants.secrets[{i}].name"), why);
        }
    }
    if grants.memory_limit_mib == Some(0) {
        problem("grants.memoryLimitMiB", "must be at least 1".into());
    }
    if grants.call_timeout_seconds == Some(0) {
        problem("grants.callTimeoutSeconds", "must be at least 1".into());
    }
    problems
}

/// What is wrong with a ClusterClass: on its own, and (on update) for the Clusters using it.
async fn class_problems(env: &Env, class: &ClusterClass, old: Option<&Value>) -> Vec<String> {
    if let Err(errors) = capw_topology::check_class(class) {
        return errors.errors().iter().map(ToString::to_string).collect();
    }
    let shape = shape_problems(env, class);
    if !shape.is_empty() {
        return shape;
    }
    if old.is_none() {
        return Vec::new();
    }
    let namespace = class.metadata.namespace.as_deref().unwrap_or("default");
    let name = class.metadata.name.as_deref().unwrap_or_default();
    let clusters = match env.store.list(&Cluster::kind(&()), None).await {
        Ok(clusters) => clusters,
        Err(e) => return vec![format!("ClusterClass: reading its Clusters: {}", chain(&e))],
    };
    let mut problems = Vec::new();
    for value in clusters {
        let Ok(cluster) = decode::<Cluster>(value) else {
            continue;
        };
        let cluster_ns = cluster.metadata.namespace.as_deref().unwrap_or("default");
        let class_ref = &cluster.spec.topology.class_ref;
        let uses = class_ref.name == name
            && class_ref.namespace.as_deref().unwrap_or(cluster_ns) == namespace;
        if !uses || cluster.metadata.deletion_timestamp.is_some() {
            continue;
        }
        if let Err(found) = desired_with_class(env, &cluster, class, Unanswered::Skip).await {
            let who = format!(
                "Cluster {cluster_ns}/{} would no longer compute",
                cluster.metadata.name.as_deref().unwrap_or_default()
            );
            problems.extend(found.into_iter().map(|p| format!("{who}: {p}")));
        }
    }
    problems
}

/// What is wrong with a Cluster: its topology and configs, its version change, its plan.
async fn cluster_problems(env: &Env, mut cluster: Cluster, old: Option<&Value>) -> Vec<String> {
    // The Cluster as stored before this change (none when it is new, or when what is stored
    // no longer reads as a Cluster: then nothing is compared with it).
    let old = old.and_then(|o| decode::<Cluster>(o.clone()).ok());
    let class = match class_of(env, &cluster).await {
        Ok(class) => class,
        Err(problems) => return problems,
    };
    let mut problems = match desired_with_class(env, &cluster, &class, Unanswered::Skip).await {
        Ok(desired) => {
            // The plan is asked of the cluster as stored, with the new desired state.
            if cluster.metadata.uid.is_none() {
                cluster.metadata.uid = old.as_ref().and_then(|o| o.metadata.uid.clone());
            }
            plan_problems(env, cluster.clone(), desired).await
        }
        Err(problems) => problems,
    };
    let old_version = old.as_ref().map(|o| o.spec.topology.version.as_str());
    let chains = capabilities(env, &class).map(|(name, c)| (name, c.chains_upgrades));
    let chains = chains.as_ref().map(|(name, yes)| (name.as_str(), *yes));
    let to = &cluster.spec.topology.version;
    if let Some(why) = old_version.and_then(|from| skew(from, to, chains)) {
        problems.push(format!("Cluster spec.topology.version: {why}"));
    }
    problems.extend(shape_problems(env, &class));
    problems.extend(failures_tolerated_problems(env, &class, &cluster));
    if let Some(old) = &old {
        problems.extend(change_problems(env, &class, &cluster, old));
    }
    problems
}

/// The capabilities the class's control-plane provider declares, with its name; `None` when
/// it is not loaded (the pass reports that).
fn capabilities(env: &Env, class: &ClusterClass) -> Option<(String, Capabilities)> {
    let name = &class.spec.control_plane.provider;
    let loaded = env.registry.get(name)?;
    let declared = loaded.provider.info().metadata.capabilities;
    Some((name.clone(), declared))
}

/// `failuresTolerated` asked of a control-plane provider older than contract 0.3, which is not
/// told the ask.
fn failures_tolerated_problems(env: &Env, class: &ClusterClass, cluster: &Cluster) -> Vec<String> {
    let Some(n) = cluster.spec.topology.control_plane.failures_tolerated else {
        return Vec::new();
    };
    let name = &class.spec.control_plane.provider;
    let Some(loaded) = env.registry.get(name) else {
        return Vec::new();
    };
    let version = loaded.provider.info().contract.version.clone();
    let mut parts = version.split('.').map(|p| p.parse::<u64>().unwrap_or(0));
    if (parts.next().unwrap_or(0), parts.next().unwrap_or(0)) >= (0, 3) {
        return Vec::new();
    }
    vec![format!(
        "Cluster spec.topology.controlPlane.failuresTolerated: {n} is asked of the control-plane \
         provider {name}, built for contract {version}, which is told only a replica count \
         (failures-tolerated is since 0.3): give spec.topology.controlPlane.replicas"
    )]
}

/// `controlPlane.machineInfrastructure` against the shape the control-plane provider declares:
/// given to a shape without machines, or missing for the machines shape.
fn shape_problems(env: &Env, class: &ClusterClass) -> Vec<String> {
    let Some((name, declared)) = capabilities(env, class) else {
        return Vec::new();
    };
    let given = class.spec.control_plane.machine_infrastructure.is_some();
    if declared.control_plane_shape == Some(ControlPlaneShape::Hosted)
        && env.config.management.is_none()
    {
        return vec![format!(
            "ClusterClass spec.controlPlane.provider: the control-plane provider {name} declares \
             control-plane-shape hosted: {}",
            crate::pass::actions::hosted::NO_MANAGEMENT_CLUSTER
        )];
    }
    let why = match declared.control_plane_shape {
        Some(ControlPlaneShape::Machines) if !given => format!(
            "required: the control-plane provider {name} declares control-plane-shape machines, \
             whose machines need an infrastructure config"
        ),
        Some(shape @ (ControlPlaneShape::Hosted | ControlPlaneShape::Managed)) if given => {
            format!(
                "the control-plane provider {name} declares control-plane-shape {}, which has no \
                 machines: leave machineInfrastructure out",
                shape_name(shape)
            )
        }
        _ => return Vec::new(),
    };
    vec![format!(
        "ClusterClass spec.controlPlane.machineInfrastructure: {why}"
    )]
}

fn shape_name(shape: ControlPlaneShape) -> &'static str {
    match shape {
        ControlPlaneShape::Machines => "machines",
        ControlPlaneShape::Hosted => "hosted",
        ControlPlaneShape::Managed => "managed",
    }
}

/// What the control-plane provider's capabilities refuse of a change from `old`: the replica
/// count of a control plane that does not scale, the version of one that does not upgrade.
fn change_problems(
    env: &Env,
    class: &ClusterClass,
    cluster: &Cluster,
    old: &Cluster,
) -> Vec<String> {
    let Some((name, declared)) = capabilities(env, class) else {
        return Vec::new();
    };
    let mut problems = Vec::new();
    // The size as asked: a count (absent is the default, whatever it means for the shape) or
    // the failures to tolerate, either of which a control plane that does not scale keeps.
    let size = |c: &Cluster| {
        let cp = &c.spec.topology.control_plane;
        match (cp.replicas, cp.failures_tolerated) {
            (Some(n), _) => ("replicas", n.to_string()),
            (None, Some(n)) => ("failuresTolerated", n.to_string()),
            (None, None) => ("replicas", "the default".to_owned()),
        }
    };
    let ((_, from), (field, to)) = (size(old), size(cluster));
    if from != to && !declared.control_plane_scalable {
        problems.push(format!(
            "Cluster spec.topology.controlPlane.{field}: the control-plane provider {name} \
             declares control-plane-scalable false: the control plane's size cannot change \
             from {from} to {to}"
        ));
    }
    let (from, to) = (&old.spec.topology.version, &cluster.spec.topology.version);
    if from != to && !declared.version_upgrades {
        problems.push(format!(
            "Cluster spec.topology.version: the control-plane provider {name} declares \
             version-upgrades false: the version cannot change from {from} to {to}"
        ));
    }
    problems
}

/// Why moving from version `from` to `to` is refused: a downgrade, a major change or a
/// skipped minor version, unless the control-plane provider (`chains`: its name and whether
/// it declares `chains-upgrades`; `None` when not loaded) takes several minors in one change
/// and carries them out one at a time. `None` when allowed (or when either is not a version,
/// which the topology reports).
fn skew(from: &str, to: &str, chains: Option<(&str, bool)>) -> Option<String> {
    let (old, new) = (core_version(from)?, core_version(to)?);
    if new < old {
        Some(format!(
            "{to} is older than {from}, the version the cluster has: downgrades are not supported"
        ))
    } else if new.major != old.major {
        Some(format!(
            "{from} to {to} changes the major version, which is not supported"
        ))
    } else if new.minor > old.minor + 1 {
        let why = match chains {
            Some((_, true)) => return None,
            Some((name, false)) => {
                format!(" (the control-plane provider {name} does not declare chains-upgrades)")
            }
            None => String::new(),
        };
        Some(format!(
            "{from} to {to} would skip minor version {}.{}: upgrade one minor version at a \
             time{why}",
            old.major,
            old.minor + 1
        ))
    } else {
        None
    }
}

/// The control-plane provider's refusal of the desired state, asked with the cluster's
/// current members (none for a new cluster); a provider not loaded, or a plan that fails for
/// a reason that may pass, refuses nothing.
async fn plan_problems(
    env: &Env,
    cluster: Cluster,
    desired: capw_topology::DesiredState,
) -> Vec<String> {
    if env
        .registry
        .get(&desired.control_plane.config.provider)
        .is_none()
    {
        return Vec::new();
    }
    let mut snapshot = match observe(env, cluster).await {
        Ok(snapshot) => snapshot,
        Err(e) => return vec![format!("Cluster: reading what it has: {}", chain(&e))],
    };
    snapshot.desired = Ok(desired);
    // Admission reads no workload cluster: members count by their machines' phase here; only
    // the provider's refusal of the desired state matters.
    // Nor etcd: every member's place in it is unknown to the plan.
    let etcd = capw_reconcile::EtcdView::Unmanaged;
    match plan(
        env,
        &snapshot,
        &capw_reconcile::WorkloadView::Off,
        &etcd,
        &[],
    )
    .await
    {
        // Only the provider's own verdict on the input: not a call that failed on the way.
        Err(note)
            if note.permanent
                && note
                    .condition
                    .as_ref()
                    .is_some_and(|c| c.1 == "ProviderError") =>
        {
            // The message names the provider and the call.
            let message = note.condition.map(|(_, _, m)| m).unwrap_or_default();
            vec![format!("Cluster spec.topology.controlPlane: {message}")]
        }
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::skew;

    #[test]
    fn version_changes_allowed_and_refused() {
        let kcp = Some(("kubeadm-control-plane", false));
        assert_eq!(skew("v1.34.1", "v1.34.1", kcp), None);
        assert_eq!(skew("v1.34.1", "v1.34.5", kcp), None);
        assert_eq!(skew("v1.34.1", "v1.35.0", kcp), None);
        let skipped = skew("v1.33.4", "v1.35.0", kcp).expect("refused");
        assert!(
            skipped.contains("would skip minor version 1.34")
                && skipped.contains(
                    "the control-plane provider kubeadm-control-plane does not declare \
                     chains-upgrades"
                ),
            "{skipped}"
        );
        // A provider that chains upgrades takes two minors in one change; never a downgrade.
        let chains = Some(("managed", true));
        assert_eq!(skew("v1.33.4", "v1.35.0", chains), None);
        assert!(skew("v1.35.0", "v1.33.0", chains).is_some());
        let unloaded = skew("v1.33.4", "v1.35.0", None).expect("refused");
        assert!(!unloaded.contains("chains-upgrades"), "{unloaded}");
        let down = skew("v1.35.0", "v1.34.9", kcp).expect("refused");
        assert!(down.contains("downgrades are not supported"), "{down}");
        let patch_down = skew("v1.34.2", "v1.34.1", kcp).expect("refused");
        assert!(patch_down.contains("older than v1.34.2"), "{patch_down}");
        assert!(skew("v1.34.1", "v2.0.0", kcp).is_some());
        // Not a version: the topology says so, with its path.
        assert_eq!(skew("v1.34.1", "latest", kcp), None);
    }
}
