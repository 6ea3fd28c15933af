//! `capw describe cluster NAME`: a Cluster as a tree, after `clusterctl describe cluster`:
//! cluster → infrastructure → control plane (its machines) → pools (their machines), each
//! line with its readiness, reason and message.

use std::fmt::Write as _;

use anyhow::bail;
use capw_engine::store::{ObjectKey, ObjectStore};
use serde_json::Value;

use crate::cli::{DescribeArgs, GlobalArgs, Resource};
use crate::get::text;

/// A condition's (status, reason, message), `("-", "", "")` when absent.
fn cond(v: &Value, type_: &str) -> (String, String, String) {
    v.pointer("/status/conditions")
        .and_then(Value::as_array)
        .and_then(|cs| cs.iter().find(|c| c["type"] == type_))
        .map_or(("-".into(), String::new(), String::new()), shown)
}

/// A condition's (status, reason, message), fit for a terminal.
fn shown(c: &Value) -> (String, String, String) {
    (text(c, "/status"), text(c, "/reason"), text(c, "/message"))
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

fn machine_line(m: &Value) -> String {
    format!(
        "Machine/{}  {} {} {}",
        text(m, "/metadata/name"),
        text(m, "/status/phase"),
        text(m, "/spec/failureDomain"),
        text(m, "/status/providerId"),
    )
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
    let Some(c) = store
        .get(&ObjectKey::namespaced("Cluster", namespace, name))
        .await?
    else {
        bail!("Cluster {namespace}/{name} not found");
    };
    let class = store
        .get(&ObjectKey::namespaced(
            "ClusterClass",
            namespace,
            &text(&c, "/spec/topology/classRef/name"),
        ))
        .await?;
    let provider = |pointer: &str| class.as_ref().map_or("-".into(), |cc| text(cc, pointer));
    let machines: Vec<Value> = store
        .list("Machine", Some(namespace))
        .await?
        .into_iter()
        .filter(|m| text(m, "/spec/clusterName") == name)
        .collect();
    let mut tree = Tree { rows: Vec::new() };
    tree.row(
        format!(
            "Cluster/{name}  {} {}",
            text(&c, "/status/phase"),
            text(&c, "/spec/topology/version")
        ),
        cond(&c, "Ready"),
    );
    // What holds the cluster beyond its parts' readiness (its topology, its secrets, a
    // lifecycle hook, an orphan that stays): every other condition that is false.
    let conditions = c
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    for condition in conditions {
        let type_ = text(condition, "/type");
        if text(condition, "/status") == "False" && !TREE_CONDITIONS.contains(&type_.as_str()) {
            tree.row(format!("├─{type_}"), shown(condition));
        }
    }
    let endpoint = match (
        c.pointer("/status/controlPlaneEndpoint/host"),
        c.pointer("/status/controlPlaneEndpoint/port"),
    ) {
        (Some(h), Some(p)) => format!(" {}:{p}", h.as_str().unwrap_or_default()),
        _ => String::new(),
    };
    tree.row(
        format!(
            "├─Infrastructure ({}){endpoint}",
            provider("/spec/infrastructure/provider")
        ),
        cond(&c, "InfrastructureReady"),
    );
    tree.row(
        format!(
            "├─ControlPlane ({}) {}/{}",
            provider("/spec/controlPlane/provider"),
            text(&c, "/status/controlPlane/readyReplicas"),
            text(&c, "/status/controlPlane/desiredReplicas")
        ),
        cond(&c, "ControlPlaneReady"),
    );
    let cp: Vec<&Value> = machines
        .iter()
        .filter(|m| text(m, "/spec/role") != "Worker")
        .collect();
    for (i, m) in cp.iter().enumerate() {
        let branch = if i + 1 == cp.len() {
            "└─"
        } else {
            "├─"
        };
        tree.row(
            format!("│ {branch}{}", machine_line(m)),
            cond(m, "InfrastructureReady"),
        );
    }
    tree.row("└─Workers".into(), cond(&c, "WorkersReady"));
    let pools: Vec<Value> = c
        .pointer("/status/workers")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    for (i, pool) in pools.iter().enumerate() {
        let last_pool = i + 1 == pools.len();
        let pool_name = text(pool, "/name");
        tree.row(
            format!(
                "  {}Pool/{pool_name} {}/{}",
                if last_pool { "└─" } else { "├─" },
                text(pool, "/readyReplicas"),
                text(pool, "/desiredReplicas")
            ),
            ("".into(), String::new(), String::new()),
        );
        let members: Vec<&Value> = machines
            .iter()
            .filter(|m| text(m, "/spec/role") == "Worker" && text(m, "/spec/pool") == pool_name)
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
                cond(m, "InfrastructureReady"),
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
        let machine = json!({
            "metadata": {"name": "m-0"},
            "status": {
                "phase": "Running",
                "providerId": long_id,
                "conditions": [{"type": "InfrastructureReady", "status": "False",
                    "reason": forged, "message": forged.repeat(100_000)}]
            }
        });
        let mut tree = Tree { rows: Vec::new() };
        tree.row(
            machine_line(&machine),
            cond(&machine, "InfrastructureReady"),
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
        let condition = |type_: &str, status: &str, reason: &str| json!({"type": type_, "status": status, "reason": reason, "message": format!("{reason} says why")});
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

    #[test]
    fn plain_text_is_left_as_it_is() {
        let v = json!({"a": "zone-a · ü", "n": 3});
        assert_eq!(text(&v, "/a"), "zone-a · ü");
        assert_eq!(text(&v, "/n"), "3");
        assert_eq!(text(&v, "/missing"), "-");
    }
}
