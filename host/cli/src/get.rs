//! `capw get`: objects as a table.

use std::io::Write as _;

use anyhow::Context as _;
use capw_engine::store::{ObjectKey, ObjectStore};
use serde_json::Value;

use crate::cli::{GetArgs, GlobalArgs, Resource};

/// Longest text of one field that is printed, in characters; the rest is counted, not shown.
const MAX_SHOWN: usize = 512;

/// A string at `pointer`, or `-`, fit for a terminal ([`printable`]): what providers write
/// into status is not trusted to be short or free of control characters.
pub fn text(v: &Value, pointer: &str) -> String {
    match v.pointer(pointer) {
        Some(Value::String(s)) => printable(s),
        Some(Value::Null) | None => "-".into(),
        Some(other) => printable(&other.to_string()),
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

/// The status of condition `type_`, or `-`.
pub fn condition(v: &Value, type_: &str) -> String {
    v.pointer("/status/conditions")
        .and_then(Value::as_array)
        .and_then(|cs| cs.iter().find(|c| c["type"] == type_))
        .map_or("-".into(), |c| text(c, "/status"))
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
                .list("Cluster", ns)
                .await?
                .iter()
                .map(|c| {
                    vec![
                        text(c, "/metadata/namespace"),
                        text(c, "/metadata/name"),
                        text(c, "/spec/topology/classRef/name"),
                        text(c, "/status/phase"),
                        text(c, "/spec/topology/version"),
                        format!(
                            "{}/{}",
                            text(c, "/status/controlPlane/readyReplicas"),
                            text(c, "/status/controlPlane/desiredReplicas")
                        ),
                        format!(
                            "{}/{}",
                            text(c, "/status/workersReadyReplicas"),
                            text(c, "/status/workersDesiredReplicas")
                        ),
                        condition(c, "Ready"),
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
                .list("Machine", ns)
                .await?
                .iter()
                .map(|m| {
                    vec![
                        text(m, "/metadata/namespace"),
                        text(m, "/metadata/name"),
                        text(m, "/spec/clusterName"),
                        text(m, "/spec/role"),
                        text(m, "/spec/pool"),
                        text(m, "/status/phase"),
                        text(m, "/spec/version"),
                        text(m, "/spec/failureDomain"),
                        text(m, "/status/providerId"),
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
                .list("WasmProvider", None)
                .await?
                .iter()
                .map(|p| {
                    let points: Vec<String> = p
                        .pointer("/status/extensionPoints")
                        .and_then(Value::as_array)
                        .map(|a| {
                            a.iter()
                                .filter_map(|v| v.as_str().map(String::from))
                                .collect()
                        })
                        .unwrap_or_default();
                    let digest = text(p, "/status/digest");
                    vec![
                        text(p, "/metadata/name"),
                        text(p, "/status/providerName"),
                        text(p, "/status/providerVersion"),
                        text(p, "/status/contractVersion"),
                        if points.is_empty() {
                            "-".into()
                        } else {
                            points.join(",")
                        },
                        condition(p, "Loaded"),
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
                .list("ClusterClass", ns)
                .await?
                .iter()
                .map(|c| {
                    vec![
                        text(c, "/metadata/namespace"),
                        text(c, "/metadata/name"),
                        text(c, "/spec/infrastructure/provider"),
                        text(c, "/spec/controlPlane/provider"),
                    ]
                })
                .collect(),
        ),
    })
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
