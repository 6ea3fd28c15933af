//! `capw get`: objects as a table.

use std::io::Write as _;

use anyhow::Context as _;
use capw_api::{Cluster, ClusterClass, Condition, Machine, WasmProvider};
use capw_engine::store::{ObjectKey, ObjectStore, TypedObjects as _};
use serde::Serialize;
use serde_json::Value;

use crate::cli::{GetArgs, GlobalArgs, Resource};

/// Longest text of one field that is printed, in characters; the rest is counted, not shown.
const MAX_SHOWN: usize = 512;

/// `value` as one cell fit for a terminal ([`printable`]): a string as it is, an enum by the
/// name it is stored under, a number as written, `-` when absent. What providers write into
/// status is not trusted to be short or free of control characters.
pub fn cell<T: Serialize + ?Sized>(value: &T) -> String {
    match serde_json::to_value(value) {
        Ok(Value::String(s)) => printable(&s),
        Ok(Value::Null) | Err(_) => "-".into(),
        Ok(other) => printable(&other.to_string()),
    }
}

/// `s` as one line a terminal shows as written: control characters (newlines, carriage
/// returns, ESC and the rest of C0 and C1, DEL) escaped as `\n`, `\r`, `\u{1b}`..., so
/// that no text can move the cursor, clear the screen or forge a line; at most
/// [`MAX_SHOWN`] characters, then how many more there were.
pub fn printable(s: &str) -> String {
    let mut out = String::with_capacity(s.len().min(MAX_SHOWN + 32));
    for (shown, (i, c)) in s.char_indices().enumerate() {
        if shown == MAX_SHOWN {
            let rest = s[i..].chars().count();
            out.push_str(&format!("… ({rest} more characters)"));
            break;
        }
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

/// The status of condition `type_` among `conditions`, or `-`.
pub fn condition(conditions: &[Condition], type_: &str) -> String {
    conditions
        .iter()
        .find(|c| c.type_ == type_)
        .map_or("-".into(), |c| cell(&c.status))
}

/// Prints `rows` under `header`, columns padded to their widest cell.
pub fn print_table(header: &[&str], rows: &[Vec<String>]) {
    let mut widths: Vec<usize> = header.iter().map(|h| h.len()).collect();
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: Vec<&str>| {
        let padded: Vec<String> = cells
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("{c}{}", " ".repeat(w.saturating_sub(c.chars().count()))))
            .collect();
        println!("{}", padded.join("   ").trim_end());
    };
    line(header.to_vec());
    for row in rows {
        line(row.iter().map(String::as_str).collect());
    }
}

async fn rows(
    store: &dyn ObjectStore,
    resource: Resource,
    ns: Option<&str>,
) -> anyhow::Result<(Vec<&'static str>, Vec<Vec<String>>)> {
    Ok(match resource {
        Resource::Clusters => (
            vec![
                "NAMESPACE",
                "NAME",
                "CLASS",
                "PHASE",
                "VERSION",
                "CONTROL PLANE",
                "WORKERS",
                "READY",
            ],
            store
                .list_as::<Cluster>(ns)
                .await?
                .iter()
                .map(|c| {
                    let status = c.status.as_ref();
                    let control_plane = status.and_then(|s| s.control_plane.as_ref());
                    vec![
                        cell(&c.metadata.namespace),
                        cell(&c.metadata.name),
                        cell(&c.spec.topology.class_ref.name),
                        cell(&status.map(|s| s.phase)),
                        cell(&c.spec.topology.version),
                        format!(
                            "{}/{}",
                            cell(&control_plane.map(|cp| cp.counters.ready_replicas)),
                            cell(&control_plane.map(|cp| cp.counters.desired_replicas))
                        ),
                        format!(
                            "{}/{}",
                            cell(&status.map(|s| s.workers_ready_replicas)),
                            cell(&status.map(|s| s.workers_desired_replicas))
                        ),
                        condition(conditions(status.map(|s| &s.conditions)), "Ready"),
                    ]
                })
                .collect(),
        ),
        Resource::Machines => (
            vec![
                "NAMESPACE",
                "NAME",
                "CLUSTER",
                "ROLE",
                "POOL",
                "PHASE",
                "VERSION",
                "ZONE",
                "PROVIDER ID",
            ],
            store
                .list_as::<Machine>(ns)
                .await?
                .iter()
                .map(|m| {
                    let status = m.status.as_ref();
                    vec![
                        cell(&m.metadata.namespace),
                        cell(&m.metadata.name),
                        cell(&m.spec.cluster_name),
                        cell(&m.spec.role),
                        cell(&m.spec.pool),
                        cell(&status.map(|s| s.phase)),
                        cell(&m.spec.version),
                        cell(&m.spec.failure_domain),
                        cell(&status.and_then(|s| s.provider_id.as_ref())),
                    ]
                })
                .collect(),
        ),
        Resource::Providers => (
            vec![
                "NAME",
                "PROVIDER",
                "VERSION",
                "CONTRACT",
                "EXTENSION POINTS",
                "LOADED",
                "DIGEST",
            ],
            store
                .list_as::<WasmProvider>(None)
                .await?
                .iter()
                .map(|p| {
                    let status = p.status.as_ref();
                    let points = status.map_or(&[][..], |s| s.extension_points.as_slice());
                    let digest = cell(&status.and_then(|s| s.digest.as_ref()));
                    vec![
                        cell(&p.metadata.name),
                        cell(&status.and_then(|s| s.provider_name.as_ref())),
                        cell(&status.and_then(|s| s.provider_version.as_ref())),
                        cell(&status.and_then(|s| s.contract_version.as_ref())),
                        if points.is_empty() {
                            "-".into()
                        } else {
                            points.join(",")
                        },
                        condition(conditions(status.map(|s| &s.conditions)), "Loaded"),
                        digest.chars().take(19).collect(),
                    ]
                })
                .collect(),
        ),
        Resource::Kubeconfig | Resource::ClusterSecrets => {
            anyhow::bail!("a cluster's kubeconfig or secrets are printed, not listed")
        }
        Resource::Clusterclasses => (
            vec!["NAMESPACE", "NAME", "INFRASTRUCTURE", "CONTROL PLANE"],
            store
                .list_as::<ClusterClass>(ns)
                .await?
                .iter()
                .map(|c| {
                    vec![
                        cell(&c.metadata.namespace),
                        cell(&c.metadata.name),
                        cell(&c.spec.infrastructure.provider),
                        cell(&c.spec.control_plane.provider),
                    ]
                })
                .collect(),
        ),
    })
}

/// The conditions of a status that may be absent.
pub fn conditions(conditions: Option<&Vec<Condition>>) -> &[Condition] {
    conditions.map_or(&[], Vec::as_slice)
}

/// Prints the admin kubeconfig of cluster `name` in `namespace`.
async fn print_kubeconfig(
    store: &dyn ObjectStore,
    namespace: &str,
    name: &str,
) -> anyhow::Result<()> {
    let key = ObjectKey::namespaced(
        "Secret",
        namespace,
        &capw_engine::kubeconfig_secret_name(name),
    );
    let Some(secret) = store.get(&key).await? else {
        anyhow::bail!(
            "no kubeconfig for cluster {namespace}/{name}: it is written once the cluster has \
             an endpoint, with workload cluster access on (--workload-clusters connect)"
        );
    };
    let value = capw_engine::kubeconfig_value(&secret)
        .with_context(|| format!("the Secret {key} holds no readable `value`"))?;
    std::io::stdout()
        .write_all(&value)
        .context("writing the kubeconfig")?;
    Ok(())
}

/// Prints the names of cluster `name`'s secret items, one a line, or the bytes of `item`.
async fn print_cluster_secrets(
    store: &dyn ObjectStore,
    namespace: &str,
    name: &str,
    item: Option<&str>,
) -> anyhow::Result<()> {
    let key = ObjectKey::namespaced("Secret", namespace, &capw_engine::cluster_secret_name(name));
    let Some(secret) = store.get(&key).await? else {
        anyhow::bail!(
            "no secrets for cluster {namespace}/{name}: the bootstrap provider makes them on the \
             cluster's first pass"
        );
    };
    let items = capw_engine::stored_secret_items(&secret)
        .with_context(|| format!("the Secret {key} holds no readable items"))?;
    let mut out = std::io::stdout();
    match item {
        None => {
            for (item, _) in &items {
                writeln!(out, "{item}").context("writing the item names")?;
            }
        }
        Some(item) => {
            let Some((_, bytes)) = items.iter().find(|(n, _)| n == item) else {
                let names: Vec<&str> = items.iter().map(|(n, _)| n.as_str()).collect();
                anyhow::bail!(
                    "cluster {namespace}/{name} has no secret item `{item}`; it has: {}",
                    names.join(", ")
                );
            };
            out.write_all(bytes).context("writing the item")?;
        }
    }
    Ok(())
}

pub async fn run(global: &GlobalArgs, args: GetArgs) -> anyhow::Result<()> {
    let store = crate::source::open(global, &args.cluster).await?;
    let store = store.as_ref();
    let namespace = args.namespace.as_deref().unwrap_or("default");
    match (args.resource, &args.name) {
        (Resource::Kubeconfig, None) => {
            anyhow::bail!("which cluster? `capw get kubeconfig CLUSTER [-n NAMESPACE]`")
        }
        (Resource::ClusterSecrets, None) => {
            anyhow::bail!("which cluster? `capw get cluster-secrets CLUSTER [ITEM] [-n NAMESPACE]`")
        }
        (Resource::Kubeconfig, Some(name)) => {
            return print_kubeconfig(store, namespace, name).await;
        }
        (Resource::ClusterSecrets, Some(name)) => {
            return print_cluster_secrets(store, namespace, name, args.item.as_deref()).await;
        }
        _ => {}
    }
    if args.item.is_some() {
        anyhow::bail!("only `capw get cluster-secrets CLUSTER ITEM` takes an item");
    }
    if let Some(name) = &args.name {
        anyhow::bail!("`capw get` lists every object; to see {name}, use `capw describe`");
    }
    let (header, rows) = rows(store, args.resource, args.namespace.as_deref()).await?;
    if rows.is_empty() {
        eprintln!("no objects found");
        return Ok(());
    }
    print_table(&header, &rows);
    Ok(())
}
