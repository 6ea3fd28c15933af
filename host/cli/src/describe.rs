//! `capw describe cluster NAME`: a Cluster as a tree, after `clusterctl describe cluster`:
//! cluster → infrastructure → control plane (its machines) → pools (their machines), each
//! line with its readiness, reason and message.

use std::fmt::Write as _;

use anyhow::bail;
use capw_api::{Cluster, ClusterClass, Condition, ConditionStatus, Machine, MachineRole};
use capw_engine::store::{ObjectStore, TypedObjects as _};

use crate::cli::{DescribeArgs, GlobalArgs, Resource};
use crate::get::{cell, conditions, printable};
use capw_engine::CONTROL_PLANE_PROVIDER_PREFIX as PROVIDER_CONDITION_PREFIX;

/// A condition's (status, reason, message), `("-", "", "")` when absent.
fn cond(conditions: &[Condition], type_: &str) -> (String, String, String) {
    conditions
        .iter()
        .find(|c| c.type_ == type_)
        .map_or(("-".into(), String::new(), String::new()), shown)
}

/// A condition's (status, reason, message), fit for a terminal.
fn shown(c: &Condition) -> (String, String, String) {
    (cell(&c.status), printable(&c.reason), printable(&c.message))
}

/// The Cluster's conditions the tree's own rows show.
const TREE_CONDITIONS: [&str; 4] = [
    "Ready",
    "InfrastructureReady",
    "ControlPlaneReady",
    "WorkersReady",
];

struct Tree {
    rows: Vec<(String, String, String, String)>,
}

impl Tree {
    fn row(&mut self, label: String, (ready, reason, message): (String, String, String)) {
        let message = if message == "-" {
            String::new()
        } else {
            message
        };
        self.rows.push((label, ready, reason, message));
    }

    fn render(&self) -> String {
        let w = self
            .rows
            .iter()
            .map(|r| r.0.chars().count())
            .max()
            .unwrap_or(0)
            .max(4);
        let r = self
            .rows
            .iter()
            .map(|r| r.2.chars().count())
            .max()
            .unwrap_or(0)
            .max(6);
        // Padded by hand: a width from provider text may be beyond what `format!` takes.
        let pad = |s: &str, width: usize| {
            format!("{s}{}", " ".repeat(width.saturating_sub(s.chars().count())))
        };
        let mut out = format!(
            "{}  {:<5}  {}  MESSAGE\n",
            pad("NAME", w),
            "READY",
            pad("REASON", r)
        );
        for (label, ready, reason, message) in &self.rows {
            let line = format!(
                "{}  {}  {}  {message}",
                pad(label, w),
                pad(ready, 5),
                pad(reason, r)
            );
            let _ = writeln!(out, "{}", line.trim_end());
        }
        out
    }
}

fn machine_line(m: &Machine) -> String {
    let status = m.status.as_ref();
    format!(
        "Machine/{}  {} {} {}",
        cell(&m.metadata.name),
        cell(&status.map(|s| s.phase)),
        cell(&m.spec.failure_domain),
        cell(&status.and_then(|s| s.provider_id.as_ref())),
    )
}

/// A Machine's conditions.
fn machine_conditions(m: &Machine) -> &[Condition] {
    conditions(m.status.as_ref().map(|s| &s.conditions))
}

/// The condition a Machine's row shows: while its Node is drained, `DrainingSucceeded`, which
/// names the Pods and budgets that hold it; else `InfrastructureReady`, unless that is fine
/// and the machine is out of date: then `UpToDate`, which names what changed.
fn machine_row_condition(m: &Machine) -> (String, String, String) {
    let drain = cond(machine_conditions(m), "DrainingSucceeded");
    if m.metadata.deletion_timestamp.is_some() && drain.0 == "False" {
        return drain;
    }
    let infrastructure = cond(machine_conditions(m), "InfrastructureReady");
    let up_to_date = cond(machine_conditions(m), "UpToDate");
    if infrastructure.0 != "False" && up_to_date.0 == "False" {
        return up_to_date;
    }
    infrastructure
}

/// The tree of Cluster `namespace/name`.
///
/// # Errors
///
/// When it does not exist or the store fails.
pub async fn render(
    store: &dyn ObjectStore,
    namespace: &str,
    name: &str,
) -> anyhow::Result<String> {
    let Some(c) = store.get_as::<Cluster>(namespace, name).await? else {
        bail!("Cluster {namespace}/{name} not found");
    };
    let class = store
        .get_as::<ClusterClass>(namespace, &c.spec.topology.class_ref.name)
        .await?;
    let infrastructure = cell(&class.as_ref().map(|cc| &cc.spec.infrastructure.provider));
    let control_plane = cell(&class.as_ref().map(|cc| &cc.spec.control_plane.provider));
    let machines: Vec<Machine> = store
        .list_as::<Machine>(Some(namespace))
        .await?
        .into_iter()
        .filter(|m| m.spec.cluster_name == name)
        .collect();
    let status = c.status.as_ref();
    let cluster_conditions = conditions(status.map(|s| &s.conditions));
    let mut tree = Tree { rows: Vec::new() };
    tree.row(
        format!(
            "Cluster/{name}  {} {}",
            cell(&status.map(|s| s.phase)),
            cell(&c.spec.topology.version)
        ),
        cond(cluster_conditions, "Ready"),
    );
    // What holds the cluster beyond its parts' readiness (its topology, its secrets, a
    // lifecycle hook, an orphan that stays): every other condition that is false.
    for condition in cluster_conditions {
        if condition.status == ConditionStatus::False
            && !TREE_CONDITIONS.contains(&condition.type_.as_str())
            && !condition.type_.starts_with(PROVIDER_CONDITION_PREFIX)
        {
            tree.row(
                format!("├─{}", printable(&condition.type_)),
                shown(condition),
            );
        }
    }
    let endpoint = status
        .and_then(|s| s.control_plane_endpoint.as_ref())
        .map_or(String::new(), |e| {
            format!(" {}:{}", printable(&e.host), e.port)
        });
    tree.row(
        format!("├─Infrastructure ({infrastructure}){endpoint}"),
        cond(cluster_conditions, "InfrastructureReady"),
    );
    let cp_status = status.and_then(|s| s.control_plane.as_ref());
    let cp_counters = cp_status.map(|cp| cp.counters);
    // The version it runs when it differs from the spec's (an upgrade under way, or one the
    // service made), and the failures it tolerates beside those the Cluster asked.
    let runs = cp_status
        .and_then(|cp| cp.version.as_deref())
        .filter(|v| *v != c.spec.topology.version)
        .map_or(String::new(), |v| format!(", runs {}", printable(v)));
    let asked = c.spec.topology.control_plane.failures_tolerated;
    let tolerated = cp_status.and_then(|cp| cp.failures_tolerated);
    let tolerates = match (asked, tolerated) {
        (None, None) => String::new(),
        (Some(a), None) => format!(", failures tolerated: {a} asked"),
        (None, Some(t)) => format!(", tolerates {t} failed"),
        (Some(a), Some(t)) => format!(", tolerates {t} failed ({a} asked)"),
    };
    tree.row(
        format!(
            "├─ControlPlane ({control_plane}) {}/{}{runs}{tolerates}",
            cell(&cp_counters.map(|c| c.ready_replicas)),
            cell(&cp_counters.map(|c| c.desired_replicas))
        ),
        cond(cluster_conditions, "ControlPlaneReady"),
    );
    let cp: Vec<&Machine> = machines
        .iter()
        .filter(|m| m.spec.role != MachineRole::Worker)
        .collect();
    // What the control-plane provider says of it, each of its conditions on a row.
    let provided: Vec<&Condition> = cluster_conditions
        .iter()
        .filter(|c| c.type_.starts_with(PROVIDER_CONDITION_PREFIX))
        .collect();
    for (i, c) in provided.iter().enumerate() {
        let branch = if i + 1 == provided.len() && cp.is_empty() {
            "└─"
        } else {
            "├─"
        };
        let type_ = c.type_.trim_start_matches(PROVIDER_CONDITION_PREFIX);
        tree.row(
            format!("│ {branch}{}", printable(&format!("Provider {type_}"))),
            shown(c),
        );
    }
    for (i, m) in cp.iter().enumerate() {
        let branch = if i + 1 == cp.len() {
            "└─"
        } else {
            "├─"
        };
        tree.row(
            format!("│ {branch}{}", machine_line(m)),
            machine_row_condition(m),
        );
    }
    tree.row("└─Workers".into(), cond(cluster_conditions, "WorkersReady"));
    let pools = status.map_or(&[][..], |s| s.workers.as_slice());
    for (i, pool) in pools.iter().enumerate() {
        let last_pool = i + 1 == pools.len();
        let counters = &pool.counters;
        let outdated = if counters.up_to_date_replicas < counters.replicas {
            format!(", {} up to date", counters.up_to_date_replicas)
        } else {
            String::new()
        };
        tree.row(
            format!(
                "  {}Pool/{} {}/{}{outdated}",
                if last_pool { "└─" } else { "├─" },
                printable(&pool.name),
                counters.ready_replicas,
                counters.desired_replicas
            ),
            ("".into(), String::new(), String::new()),
        );
        let members: Vec<&Machine> = machines
            .iter()
            .filter(|m| m.spec.role == MachineRole::Worker && m.spec.pool == pool.name)
            .collect();
        for (j, m) in members.iter().enumerate() {
            let stem = if last_pool { "   " } else { "│  " };
            let branch = if j + 1 == members.len() {
                "└─"
            } else {
                "├─"
            };
            tree.row(
                format!("  {stem}{branch}{}", machine_line(m)),
                machine_row_condition(m),
            );
        }
    }
    Ok(tree.render())
}

pub async fn run(global: &GlobalArgs, args: DescribeArgs) -> anyhow::Result<()> {
    if args.resource != Resource::Clusters {
        bail!("only `capw describe cluster NAME` is served");
    }
    let store = crate::source::open(global, &args.cluster).await?;
    print!(
        "{}",
        render(store.as_ref(), &args.namespace, &args.name).await?
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use capw_store::Store;
    use serde_json::json;

    use super::*;

    #[test]
    fn hostile_provider_text_prints_as_one_bounded_line() {
        // What a hostile provider can write: a megabyte-long provider-id with newlines, a
        // message that clears the screen and forges a condition line.
        let long_id = format!("sim://{}\nReady=True", "x".repeat(1 << 20));
        let forged = "\u{1b}[2J\u{1b}]0;title\u{7}\rReady=True\nReady  True";
        let machine: Machine = serde_json::from_value(json!({
            "apiVersion": "capw.dev/v1alpha1", "kind": "Machine",
            "metadata": {"name": "m-0", "namespace": "default"},
            "spec": {"clusterName": "alpha", "role": "Worker", "pool": "md-0",
                "version": "v1.34.4", "idempotencyKey": "k"},
            "status": {
                "phase": "Running",
                "providerId": long_id,
                "conditions": [{"type": "InfrastructureReady", "status": "False",
                    "reason": forged, "message": forged.repeat(100_000),
                    "lastTransitionTime": "2026-12-02T00:00:00Z"}]
            }
        }))
        .unwrap();
        let mut tree = Tree { rows: Vec::new() };
        tree.row(
            machine_line(&machine),
            cond(machine_conditions(&machine), "InfrastructureReady"),
        );
        let out = tree.render();

        assert_eq!(out.lines().count(), 2, "a header and one row");
        assert!(!out.contains(['\u{1b}', '\r', '\u{7}']), "{out:.200}");
        assert!(out.contains(r"\u{1b}[2J"), "escaped, not dropped");
        assert!(out.len() < 8 * 1024, "{} bytes", out.len());
        assert!(out.contains("more characters)"));
    }

    #[tokio::test]
    async fn what_else_holds_the_cluster_has_a_row_of_its_own() {
        let tmp = tempfile::tempdir().unwrap();
        let store = Store::open(&tmp.path().join("state.redb")).unwrap();
        let condition = |type_: &str, status: &str, reason: &str| json!({"type": type_, "status": status, "reason": reason, "message": format!("{reason} says why"), "lastTransitionTime": "2026-12-02T00:00:00Z"});
        store
            .create(json!({
                "apiVersion": "capw.dev/v1alpha1", "kind": "Cluster",
                "metadata": {"name": "alpha", "namespace": "default"},
                "spec": {"topology": {"classRef": {"name": "none"}, "version": "v1.34.4"}},
                "status": {"phase": "Provisioning", "conditions": [
                    condition("Ready", "False", "NotReady"),
                    condition("InfrastructureReady", "False", "Booting"),
                    condition("LifecycleHooksPassed", "False", "BeforeClusterCreateHeld"),
                    condition("ControlPlaneInitialized", "False", "InvalidAnswer"),
                    condition("TopologyReconciled", "True", "Reconciled"),
                ]},
            }))
            .unwrap();

        let out = render(&store, "default", "alpha").await.unwrap();

        for row in [
            "├─LifecycleHooksPassed",
            "BeforeClusterCreateHeld says why",
            "├─ControlPlaneInitialized",
            "InvalidAnswer says why",
        ] {
            assert!(out.contains(row), "{row}: {out}");
        }
        assert!(!out.contains("TopologyReconciled"), "{out}");
        assert_eq!(out.matches("InfrastructureReady").count(), 0, "{out}");
        assert_eq!(out.matches("Booting says why").count(), 1, "{out}");
    }

    /// The control-plane provider's conditions have rows of their own under the control
    /// plane, true or false, and are not taken for what holds the cluster.
    #[tokio::test]
    async fn the_control_plane_providers_conditions_show_under_the_control_plane() {
        let tmp = tempfile::tempdir().unwrap();
        let store = Store::open(&tmp.path().join("state.redb")).unwrap();
        let condition = |type_: &str, status: &str, reason: &str| json!({"type": type_, "status": status, "reason": reason, "message": format!("{reason} says why"), "lastTransitionTime": "2026-12-02T00:00:00Z"});
        store
            .create(json!({
                "apiVersion": "capw.dev/v1alpha1", "kind": "Cluster",
                "metadata": {"name": "alpha", "namespace": "default"},
                "spec": {"topology": {"classRef": {"name": "none"}, "version": "v1.34.4"}},
                "status": {"phase": "Provisioned", "conditions": [
                    condition("Ready", "True", "Ready"),
                    condition("ControlPlaneReady", "True", "Ready"),
                    condition("controlplane.capw.dev/Available", "True", "QuorumReady"),
                    condition("controlplane.capw.dev/ScalingUp", "False", "NotScalingUp"),
                ]},
            }))
            .unwrap();

        let out = render(&store, "default", "alpha").await.unwrap();

        let lines: Vec<&str> = out.lines().collect();
        let cp = lines
            .iter()
            .position(|l| l.contains("├─ControlPlane"))
            .unwrap();
        assert!(lines[cp + 1].contains("├─Provider Available"), "{out}");
        assert!(lines[cp + 1].contains("QuorumReady says why"), "{out}");
        assert!(lines[cp + 2].contains("└─Provider ScalingUp"), "{out}");
        assert!(lines[cp + 2].contains("False"), "{out}");
        let rows = out.lines().filter(|l| l.contains("ScalingUp")).count();
        assert_eq!(rows, 1, "not also a row of its own: {out}");
    }

    /// A machine that will be replaced says which input changed, on its pool's row too.
    #[tokio::test]
    async fn an_out_of_date_machine_names_what_changed() {
        let tmp = tempfile::tempdir().unwrap();
        let store = Store::open(&tmp.path().join("state.redb")).unwrap();
        let condition = |type_: &str, status: &str, reason: &str, message: &str| json!({"type": type_, "status": status, "reason": reason, "message": message, "lastTransitionTime": "2026-12-02T00:00:00Z"});
        let counters = json!({"name": "md-0", "desiredReplicas": 2, "replicas": 2,
            "readyReplicas": 2, "upToDateReplicas": 1});
        store
            .create(json!({
                "apiVersion": "capw.dev/v1alpha1", "kind": "Cluster",
                "metadata": {"name": "alpha", "namespace": "default"},
                "spec": {"topology": {"classRef": {"name": "none"}, "version": "v1.34.4"}},
                "status": {"phase": "Provisioning", "workers": [counters]},
            }))
            .unwrap();
        for (name, up_to_date) in [
            (
                "old",
                condition(
                    "UpToDate",
                    "False",
                    "NotUpToDate",
                    "changed: infrastructure.config/instanceType; to be replaced",
                ),
            ),
            ("new", condition("UpToDate", "True", "UpToDate", "")),
        ] {
            store
                .create(json!({
                    "apiVersion": "capw.dev/v1alpha1", "kind": "Machine",
                    "metadata": {"name": name, "namespace": "default"},
                    "spec": {"clusterName": "alpha", "role": "Worker", "pool": "md-0",
                        "version": "v1.34.4", "idempotencyKey": name},
                    "status": {"phase": "Running", "conditions": [
                        condition("InfrastructureReady", "True", "Running", ""), up_to_date]},
                }))
                .unwrap();
        }

        let out = render(&store, "default", "alpha").await.unwrap();

        assert!(out.contains("Pool/md-0 2/2, 1 up to date"), "{out}");
        let old = out.lines().find(|l| l.contains("Machine/old")).unwrap();
        assert!(old.contains("NotUpToDate"), "{out}");
        assert!(old.contains("infrastructure.config/instanceType"), "{out}");
        let new = out.lines().find(|l| l.contains("Machine/new")).unwrap();
        assert!(
            new.contains("Running") && !new.contains("UpToDate"),
            "{out}"
        );
    }

    /// A machine whose deletion waits for its drain says what holds it.
    #[tokio::test]
    async fn a_machine_being_drained_names_what_holds_it() {
        let tmp = tempfile::tempdir().unwrap();
        let store = Store::open(&tmp.path().join("state.redb")).unwrap();
        let condition = |type_: &str, status: &str, reason: &str, message: &str| json!({"type": type_, "status": status, "reason": reason, "message": message, "lastTransitionTime": "2026-12-02T00:00:00Z"});
        let counters = json!({"name": "md-0", "desiredReplicas": 1, "replicas": 2,
            "readyReplicas": 1, "upToDateReplicas": 2});
        store
            .create(json!({
                "apiVersion": "capw.dev/v1alpha1", "kind": "Cluster",
                "metadata": {"name": "alpha", "namespace": "default"},
                "spec": {"topology": {"classRef": {"name": "none"}, "version": "v1.34.4"}},
                "status": {"phase": "Provisioning", "workers": [counters]},
            }))
            .unwrap();
        store
            .create(json!({
                "apiVersion": "capw.dev/v1alpha1", "kind": "Machine",
                "metadata": {"name": "leaving", "namespace": "default",
                    "finalizers": ["capw.dev/machine"]},
                "spec": {"clusterName": "alpha", "role": "Worker", "pool": "md-0",
                    "version": "v1.34.4", "idempotencyKey": "leaving"},
                "status": {"phase": "Running", "conditions": [
                    condition("InfrastructureReady", "True", "Running", ""),
                    condition("DrainingSucceeded", "False", "Draining",
                        "draining Node n1 (cordoned): Pod default/web-1 is held by PodDisruptionBudget web")]},
            }))
            .unwrap();
        let key = capw_engine::store::ObjectKey::namespaced("Machine", "default", "leaving");
        store.delete(&key).unwrap();

        let out = render(&store, "default", "alpha").await.unwrap();

        let row = out.lines().find(|l| l.contains("Machine/leaving")).unwrap();
        assert!(row.contains("Draining"), "{out}");
        assert!(row.contains("PodDisruptionBudget web"), "{out}");
    }

    #[test]
    fn plain_text_is_left_as_it_is() {
        assert_eq!(cell("zone-a · ü"), "zone-a · ü");
        assert_eq!(cell(&3), "3");
        assert_eq!(cell(&None::<String>), "-");
    }
}
