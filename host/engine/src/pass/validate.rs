//! The desired state of a Cluster: topology computed from its class, then every provider
//! config checked by its provider's own `validate-config`. Any problem blocks the cluster
//! with a message naming the field path; nothing else changes.

use capw_api::{Cluster, ClusterClass};
use capw_text::error_chain as chain;
use capw_topology::{DesiredState, compute_desired_state};

use super::env::Env;
use crate::store::TypedObjects;

/// Whether a config whose provider cannot answer (not loaded, or its `validate-config`
/// failed rather than judged) is a problem.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unanswered {
    /// A pass cannot go on without the provider's verdict.
    Refuse,
    /// Admission lets it through: the provider may be loading now (a manifest that adds a
    /// WasmProvider and the Cluster using it at once), or failing for a while; the object is
    /// not at fault, and the pass reports it.
    Skip,
}

/// The desired state of `cluster`, or every problem (`<object> <path>: <message>`).
pub(crate) async fn desired_state(
    env: &Env,
    cluster: &Cluster,
) -> Result<DesiredState, Vec<String>> {
    let class = class_of(env, cluster).await?;
    desired_with_class(env, cluster, &class, Unanswered::Refuse).await
}

/// The ClusterClass `cluster` refers to, or why there is none.
pub(crate) async fn class_of(env: &Env, cluster: &Cluster) -> Result<ClusterClass, Vec<String>> {
    let namespace = cluster
        .metadata
        .namespace
        .clone()
        .unwrap_or_else(|| "default".into());
    let class_ref = &cluster.spec.topology.class_ref;
    let class_ns = class_ref.namespace.clone().unwrap_or(namespace);
    let found = match env
        .store
        .get_as::<ClusterClass>(&class_ns, &class_ref.name)
        .await
    {
        // A cache can lag what another client wrote a moment ago (a ClusterClass and its
        // Clusters in one `kubectl apply`): "not found" is said from the store itself.
        Ok(None) => env
            .store
            .get_fresh(&crate::store::key_of::<ClusterClass>(
                &class_ns,
                &class_ref.name,
            ))
            .await
            .and_then(|o| o.map(crate::store::decode::<ClusterClass>).transpose()),
        other => other,
    };
    match found {
        Ok(Some(class)) => Ok(class),
        Ok(None) => Err(vec![format!(
            "Cluster spec.topology.classRef: ClusterClass {class_ns}/{} not found",
            class_ref.name
        )]),
        Err(e) => Err(vec![chain(&e)]),
    }
}

/// The desired state of `cluster` with `class`: the topology, then every provider config
/// checked by its provider's own `validate-config`.
pub(crate) async fn desired_with_class(
    env: &Env,
    cluster: &Cluster,
    class: &ClusterClass,
    unanswered: Unanswered,
) -> Result<DesiredState, Vec<String>> {
    let desired =
        compute_desired_state(cluster, class, &env.registry.schemas()).map_err(|errors| {
            errors
                .errors()
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
        })?;
    let mut problems = Vec::new();
    for pc in desired.provider_configs() {
        let Some(provider) = env.registry.get(&pc.provider) else {
            if unanswered == Unanswered::Refuse {
                problems.push(format!(
                    "ClusterClass {}: {}",
                    pc.origin,
                    env.registry.why_missing(&pc.provider)
                ));
            }
            continue;
        };
        let config = serde_json::Value::Object(pc.config.clone()).to_string();
        match provider.validate_config(&config).await {
            Ok(Ok(())) => {}
            Ok(Err(fields)) => problems.extend(fields.into_iter().map(|f| {
                let field = f.path.trim_start_matches('/').replace('/', ".");
                let path = if field.is_empty() {
                    pc.origin.path.clone()
                } else {
                    format!("{}.{field}", pc.origin.path)
                };
                let pool = pc
                    .origin
                    .pool
                    .as_ref()
                    .map(|p| format!(" (pool {p:?})"))
                    .unwrap_or_default();
                format!(
                    "ClusterClass {path}{pool}: provider {:?}: {}",
                    pc.provider, f.message
                )
            })),
            Err(e) if unanswered == Unanswered::Refuse => problems.push(format!(
                "ClusterClass {}: validate-config: {}",
                pc.origin,
                chain(&e)
            )),
            Err(_) => {}
        }
    }
    if problems.is_empty() {
        Ok(desired)
    } else {
        Err(problems)
    }
}
