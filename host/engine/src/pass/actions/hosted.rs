//! The hosted control plane (contract 0.3): `ReconcileControlPlane` and `DeleteControlPlane`
//! for a control-plane provider that declares the hosted shape, whose control plane runs as
//! Pods of the management cluster.
//!
//! The provider only plans: its `plan` answers every object the control plane consists of
//! (`apply-manifests`) and the certificate Secrets it needs (`certificates`). The host checks
//! them all before it applies any ([`check_plan_objects`]), mints the Secrets from the
//! cluster's CAs, which it made and keeps, applies what changed through the
//! [`ManagementCluster`](crate::store::ManagementCluster), deletes what it applied before
//! that the answer no longer holds, and tells the plan each object's readiness on the next
//! pass. Where there is no management cluster (the local mode) the shape is refused.

use std::collections::{BTreeMap, BTreeSet};

use capw_reconcile::ServiceView;
use capw_runtime::control_plane::{
    CertificateSecret, HostedObject, PlanInput, SharedDatastore, Step,
};
use capw_workload::{SharedEtcd, datastore_prefix, datastore_user};

use crate::objects::hosted::{
    ClusterCas, DATASTORE_ANNOTATION, SharedDatastoreSecret, annotated, applied_digest,
    check_plan_objects, check_shared_datastore, datastore_access_secret, digest,
    load_balancer_addresses, readiness, renew_after, renewal_due, renewal_time, roll_on_renewal,
    secret_ref, with_renewal,
};
use crate::objects::kubeconfig::kubeconfig_object;
use crate::objects::{SERVICE_JOIN_TOKEN_ITEM, secret_object};
use crate::pass::convert::wit_version;
use crate::pass::env::{Env, ProviderStatus, ServiceOutcome, context, desired_control_plane};
use crate::pass::note::ActionNote;
use crate::pass::snapshot::Snapshot;
use crate::store::{ManagementCluster, ObjectRef, Owner};

/// The condition the hosted control plane's work reports on.
const COND: &str = "ControlPlaneReady";

/// How long one call to a shared datastore may take.
const DATASTORE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// How soon a pass looks again while applied objects roll out.
const ROLLOUT_POLL: std::time::Duration = std::time::Duration::from_secs(3);

/// Why the local mode refuses the hosted shape (also said at admission).
pub(crate) const NO_MANAGEMENT_CLUSTER: &str = "a hosted control plane runs as Pods of a \
     management cluster, and the local mode has none: run this class with `capw controller` in \
     a Kubernetes cluster, or choose a machines or managed control-plane provider \
     (docs/control-plane-shapes.md)";

/// The Cluster of `s` as the owner of its hosted objects.
fn owner(s: &Snapshot) -> Owner {
    Owner {
        api_version: capw_api::API_VERSION.into(),
        kind: "Cluster".into(),
        namespace: s.namespace.clone(),
        name: s.name.clone(),
        uid: s.uid.clone(),
    }
}

/// `ReconcileControlPlane` for the hosted shape: plan with the applied objects' readiness,
/// check the answer, mint and apply what changed, prune what it dropped, record where the
/// control plane stands and store its admin kubeconfig.
pub(crate) async fn reconcile(
    env: &Env,
    s: &Snapshot,
) -> Result<(ServiceView, ProviderStatus, ActionNote), ActionNote> {
    let Some(management) = env.config.management.clone() else {
        return Err(ActionNote::host_failed(
            COND,
            "Unsupported",
            NO_MANAGEMENT_CLUSTER.into(),
        ));
    };
    let (desired, provider, version) = desired_control_plane(env, s, COND)?;
    let cp = &desired.control_plane;
    let contract = &provider.provider.info().contract.version;
    let mut parts = contract.split('.').map(|n| n.parse::<u64>().unwrap_or(0));
    if (parts.next().unwrap_or(0), parts.next().unwrap_or(0)) < (0, 3) {
        return Err(ActionNote::host_failed(
            COND,
            "Unsupported",
            format!(
                "the control-plane provider {} declares the hosted shape and is built for \
                 contract {contract}; the host applies a hosted plan's objects only by contract \
                 0.3's rules (docs/contract.md, \"Hosted control planes\"): rebuild it against 0.3",
                cp.config.provider
            ),
        ));
    }
    let cas = cluster_cas(env, s)
        .await?
        .with_validity(env.config.hosted_certificate_validity);
    let owner = owner(s);
    let listed = management
        .list(&owner)
        .await
        .map_err(|e| Env::store_failed(COND, &e))?;
    let objects: Vec<HostedObject> = listed
        .iter()
        .filter_map(|o| {
            let r = ObjectRef::of(o)?;
            let (ready, message) = readiness(o);
            Some(HostedObject {
                api_version: r.api_version,
                kind: r.kind,
                name: r.name,
                ready,
                message,
                images: capw_api::pod_template_images(o),
                addresses: load_balancer_addresses(o),
            })
        })
        .collect();
    let endpoint = (s.infrastructure.as_ref())
        .and_then(|r| r.endpoint.as_ref())
        .map(|_| s.endpoint());
    let input = PlanInput {
        version: wit_version(version),
        replicas: cp.replicas,
        members: Vec::new(),
        failure_domains: Vec::new(),
        endpoint,
        failures_tolerated: cp.failures_tolerated,
        objects: objects.clone(),
    };
    let ctx = context(s, &provider, &cp.config.config, &format!("{}-plan", s.uid));
    let plan = provider
        .provider
        .plan(&ctx, &input)
        .await
        .map_err(|e| ActionNote::failed(COND, &e))?;
    let mut next_renewal = None;
    let changed = match &plan.step {
        Step::ApplyManifests(manifests) => {
            let refused = |e: String| {
                ActionNote::host_failed(
                    COND,
                    "InvalidAnswer",
                    format!(
                        "the control-plane provider {}'s plan is refused and nothing of it \
                         applied: {e}",
                        cp.config.provider
                    ),
                )
            };
            let checked = check_plan_objects(manifests, &plan.certificates, &s.namespace, &s.name)
                .map_err(refused)?;
            let datastore = match &plan.shared_datastore {
                None => None,
                Some(d) => {
                    check_shared_datastore(d, &checked, &plan.certificates, &s.name)
                        .map_err(refused)?;
                    Some((d, read_datastore(env, &d.name).await?))
                }
            };
            let applied = apply(
                &*management,
                &owner,
                &cas,
                checked,
                &plan.certificates,
                datastore,
                &listed,
            )
            .await?;
            next_renewal = applied.next_renewal;
            applied.count
        }
        Step::None | Step::Wait(_) => 0,
        Step::CreateMachine(_) | Step::DeleteMachine(_) | Step::RemoveEtcdMember(_) => {
            return Err(ActionNote::host_failed(
                COND,
                "InvalidAnswer",
                format!(
                    "the control-plane provider {} declares the hosted shape and answered a \
                     machine step; a hosted plan answers apply-manifests, none or wait",
                    cp.config.provider
                ),
            ));
        }
    };
    let ready = plan.ready.unwrap_or(false) && changed == 0;
    let settled = changed == 0 && !matches!(plan.step, Step::Wait(_));
    let waiting: Vec<String> = objects
        .iter()
        .filter(|o| !o.ready)
        .map(|o| match &o.message {
            Some(why) => format!("{} {}: {why}", o.kind, o.name),
            None => format!("{} {}", o.kind, o.name),
        })
        .collect();
    let (note, message) = match &plan.step {
        Step::Wait(p) => (ActionNote::in_progress(COND, p), p.message.clone()),
        _ if changed > 0 => {
            let message =
                format!("applied or pruned {changed} object(s) in the management cluster");
            (rolling(message.clone()), message)
        }
        _ if !ready => {
            let message = if waiting.is_empty() {
                "the provider does not say the control plane is ready".to_owned()
            } else {
                format!("waiting for {}", waiting.join("; "))
            };
            (rolling(message.clone()), message)
        }
        _ => (ActionNote::done(), String::new()),
    };
    let endpoint = (plan.endpoint.clone()).map(|e| (e.host, e.port));
    let next_renewal = match &endpoint {
        Some((host, port)) => {
            let kubeconfig_renewal = store_kubeconfig(env, s, &cas, host, *port).await?;
            next_renewal.into_iter().chain(kubeconfig_renewal).min()
        }
        None => next_renewal,
    };
    // Come back when the first certificate is due, however settled the cluster is.
    let note = match next_renewal {
        Some(at) => {
            let due = jiff::Timestamp::now().duration_until(at);
            let due = std::time::Duration::try_from(due)
                .unwrap_or(std::time::Duration::ZERO)
                .max(std::time::Duration::from_secs(1));
            ActionNote {
                requeue: Some(note.requeue.map_or(due, |r| r.min(due))),
                ..note
            }
        }
        None => note,
    };
    let access = match &endpoint {
        Some((host, port)) if settled && ready => {
            keep_joins(env, s, &cas, &format!("{host}:{port}")).await?
        }
        // Joins need the host to write into the hosted API server; without workload access
        // (a simulated management cluster) nothing joins, and the endpoint is all there is.
        Some(_) if env.cluster_cache.is_none() => true,
        Some(_) => s.join_credentials().is_some_and(|j| j.token.is_some()),
        None => false,
    };
    let (note, message) = if settled && ready && !access {
        let message = "preparing the control plane for workers to join (kubeconfig, \
                       cluster-info, bootstrap RBAC, join token)"
            .to_owned();
        (rolling(message.clone()), message)
    } else {
        (note, message)
    };
    let state = if settled && ready {
        "Ready"
    } else {
        "InProgress"
    };
    let outcome = ServiceOutcome::new(plan, state, (settled, ready, access), endpoint, message);
    env.record_service(s, outcome.record).await?;
    let (view, status) = (outcome.view, outcome.status);
    Ok((view, status, note))
}

/// A note that objects are rolling out: look again soon.
fn rolling(message: String) -> ActionNote {
    ActionNote {
        condition: Some((COND, "RollingOut".into(), message)),
        requeue: Some(ROLLOUT_POLL),
        ..ActionNote::done()
    }
}

/// The cluster's CAs: those the host keeps with the cluster's secrets, made and stored first
/// when there are none.
async fn cluster_cas(env: &Env, s: &Snapshot) -> Result<ClusterCas, ActionNote> {
    if let Some(cas) = s.secrets.as_ref().and_then(ClusterCas::from_items) {
        return Ok(cas);
    }
    let items = ClusterCas::generate(&s.name)
        .map_err(|e| ActionNote::host_failed(COND, "CertificateError", e))?;
    let object = secret_object(&s.namespace, &s.name, &s.uid, &items);
    env.store
        .apply(object)
        .await
        .map_err(|e| Env::store_failed(COND, &e))?;
    tracing::info!(cluster = %s.name, "made the cluster's CAs for its hosted control plane");
    ClusterCas::from_items(&items).ok_or_else(|| {
        ActionNote::host_failed(COND, "CertificateError", "the new CAs do not read".into())
    })
}

/// What [`apply`] did: how many objects it applied or deleted, and when the first
/// certificate it keeps is to be renewed.
struct Applied {
    count: usize,
    next_renewal: Option<jiff::Timestamp>,
}

/// Whether a Secret of certificates applied as `applied` (if it was) is to be made again: its
/// request's digest changed, or its certificates are due for renewal at `now`.
fn to_mint(applied: Option<&serde_json::Value>, digest: &str, now: jiff::Timestamp) -> bool {
    applied.is_none_or(|o| applied_digest(o) != Some(digest) || renewal_due(o, now))
}

/// Applies the checked objects and minted Secrets whose digest changed (or whose certificates
/// are due for renewal) and deletes what was applied before and is no longer answered.
///
/// Secrets go first, so that a Pod made for a changed template mounts the new ones, and a
/// Deployment or StatefulSet that mounts a renewed certificate Secret rolls
/// ([`roll_on_renewal`]).
async fn apply(
    management: &dyn ManagementCluster,
    owner: &Owner,
    cas: &ClusterCas,
    objects: Vec<serde_json::Value>,
    certificates: &[CertificateSecret],
    datastore: Option<(&SharedDatastore, SharedDatastoreSecret)>,
    listed: &[serde_json::Value],
) -> Result<Applied, ActionNote> {
    let current: BTreeMap<ObjectRef, &serde_json::Value> = listed
        .iter()
        .filter_map(|o| Some((ObjectRef::of(o)?, o)))
        .collect();
    let now = jiff::Timestamp::now();
    let renew_at = renew_after(now, cas.validity());
    let mut keep = BTreeSet::new();
    let mut changed = Vec::new();
    // Each certificate Secret's name and renewal time, as applied after this pass.
    let mut renewals = BTreeMap::new();
    for secret in certificates {
        let r = secret_ref(&secret.name);
        let d = cas.request_digest(secret);
        let applied = current.get(&r).copied();
        let at = if to_mint(applied, &d, now) {
            let minted = cas.mint(secret, &owner.namespace).map_err(|e| {
                ActionNote::host_failed(
                    COND,
                    "InvalidAnswer",
                    format!("Secret {}: {e}", secret.name),
                )
            })?;
            if applied.is_some_and(|o| applied_digest(o) == Some(d.as_str())) {
                tracing::info!(cluster = %owner.name, secret = %secret.name, renew_after = %renew_at, "renewed the certificates of a hosted control plane's Secret");
            }
            changed.push((r.clone(), annotated(with_renewal(minted, renew_at), &d)));
            renew_at
        } else {
            applied.and_then(renewal_time).unwrap_or(renew_at)
        };
        renewals.insert(secret.name.clone(), at);
        keep.insert(r);
    }
    if let Some((asked, store)) = datastore {
        let r = secret_ref(&asked.secret);
        let user = datastore_user(&owner.namespace, &owner.name);
        let prefix = datastore_prefix(&owner.namespace, &owner.name);
        let d = store.access_digest(&user, &prefix, &asked.secret);
        let applied = current.get(&r).copied();
        let at = if to_mint(applied, &d, now) {
            let access = shared_etcd(&store)?
                .admit(&user, &prefix, cas.validity())
                .await
                .map_err(|e| datastore_failed(&store.name, &e.to_string()))?;
            tracing::info!(cluster = %owner.name, datastore = %store.name, %user, %prefix, renew_after = %renew_at, "gave the cluster its user, prefix and client certificate in the shared datastore");
            let secret =
                datastore_access_secret(&asked.secret, &owner.namespace, &store.name, &access);
            changed.push((r.clone(), annotated(with_renewal(secret, renew_at), &d)));
            renew_at
        } else {
            applied.and_then(renewal_time).unwrap_or(renew_at)
        };
        renewals.insert(asked.secret.clone(), at);
        keep.insert(r);
    }
    let stamps: BTreeMap<String, String> = (renewals.iter())
        .map(|(name, at)| (name.clone(), at.to_string()))
        .collect();
    for mut object in objects {
        let Some(r) = ObjectRef::of(&object) else {
            continue;
        };
        roll_on_renewal(&mut object, &stamps);
        let d = digest(&object);
        if current.get(&r).and_then(|o| applied_digest(o)) != Some(d.as_str()) {
            changed.push((r.clone(), annotated(object, &d)));
        }
        keep.insert(r);
    }
    let prune: Vec<ObjectRef> = current.into_keys().filter(|r| !keep.contains(r)).collect();
    let count = changed.len() + prune.len();
    let next_renewal = renewals.into_values().min();
    if !changed.is_empty() {
        let names: Vec<String> = changed.iter().map(|(r, _)| r.to_string()).collect();
        let objects: Vec<serde_json::Value> = changed.into_iter().map(|(_, o)| o).collect();
        management
            .apply(owner, &objects)
            .await
            .map_err(|e| Env::store_failed(COND, &e))?;
        tracing::info!(cluster = %owner.name, objects = %names.join(", "), "applied the hosted control plane's objects");
    }
    if !prune.is_empty() {
        management
            .delete(owner, &prune)
            .await
            .map_err(|e| Env::store_failed(COND, &e))?;
        let names: Vec<String> = prune.iter().map(ToString::to_string).collect();
        tracing::info!(cluster = %owner.name, objects = %names.join(", "), "pruned what the hosted plan dropped");
    }
    Ok(Applied {
        count,
        next_renewal,
    })
}

/// A note that the shared datastore `name` could not be used, saying why.
fn datastore_failed(name: &str, why: &str) -> ActionNote {
    ActionNote::host_failed(
        COND,
        "DatastoreFailed",
        format!("shared datastore {name}: {why}"),
    )
}

/// The shared datastore `name`: its Secret in the provider namespace, where the host reads
/// the Secrets providers are granted.
async fn read_datastore(env: &Env, name: &str) -> Result<SharedDatastoreSecret, ActionNote> {
    let crate::config::SecretSource::Store { default_namespace } = &env.config.secrets else {
        return Err(datastore_failed(
            name,
            "a shared datastore is a Secret of the management cluster, which this host has not",
        ));
    };
    let key = crate::store::ObjectKey::namespaced("Secret", default_namespace, name);
    let object = env
        .store
        .get(&key)
        .await
        .map_err(|e| Env::store_failed(COND, &e))?
        .ok_or_else(|| {
            datastore_failed(
                name,
                &format!("no Secret {default_namespace}/{name} describes it"),
            )
        })?;
    SharedDatastoreSecret::from_secret(&object).map_err(|e| datastore_failed(name, &e))
}

/// The administrator's access to `store`.
fn shared_etcd(store: &SharedDatastoreSecret) -> Result<SharedEtcd, ActionNote> {
    SharedEtcd::new(
        &store.endpoints,
        &store.ca_certificate,
        &store.ca_key,
        &store.username,
        &store.password,
        DATASTORE_TIMEOUT,
    )
    .map_err(|e| datastore_failed(&store.name, &e.to_string()))
}

/// Removes the cluster's user, role and keys from every shared datastore one of `listed` (its
/// applied objects) gave it access to.
async fn leave_datastores(
    env: &Env,
    s: &Snapshot,
    listed: &[serde_json::Value],
) -> Result<(), ActionNote> {
    let user = datastore_user(&s.namespace, &s.name);
    let prefix = datastore_prefix(&s.namespace, &s.name);
    for object in listed {
        let Some(name) = object
            .pointer("/metadata/annotations")
            .and_then(|a| a.get(DATASTORE_ANNOTATION))
            .and_then(serde_json::Value::as_str)
        else {
            continue;
        };
        let store = read_datastore(env, name).await?;
        shared_etcd(&store)?
            .remove(&user, &prefix)
            .await
            .map_err(|e| datastore_failed(name, &e.to_string()))?;
        tracing::info!(cluster = %s.name, datastore = %name, %user, %prefix, "removed the cluster's keys, user and role from the shared datastore");
    }
    Ok(())
}

/// Stores the admin kubeconfig for the control plane at `host:port`, minted from the cluster
/// CA, where the host keeps kubeconfigs (workload cluster access on) and the stored one was
/// made for another endpoint or is due for renewal; when the one kept is to be renewed.
///
/// The host holds how to reach the control plane once it has an endpoint: its CA is the
/// host's own, and the kubeconfig is minted from it.
async fn store_kubeconfig(
    env: &Env,
    s: &Snapshot,
    cas: &ClusterCas,
    host: &str,
    port: u16,
) -> Result<Option<jiff::Timestamp>, ActionNote> {
    let endpoint = format!("{host}:{port}");
    if env.cluster_cache.is_none() {
        return Ok(None);
    }
    let now = jiff::Timestamp::now();
    if let Some(stored) = &s.kubeconfig
        && stored.endpoint == endpoint
        && let Some(at) = stored.renew_after
        && at > now
    {
        return Ok(Some(at));
    }
    let kubeconfig = cas
        .admin_kubeconfig(&s.name, &format!("https://{endpoint}"))
        .map_err(|e| ActionNote::host_failed(COND, "CertificateError", e))?;
    let renew_at = renew_after(now, cas.validity());
    let object = with_renewal(
        kubeconfig_object(
            &s.namespace,
            &s.name,
            &s.uid,
            &endpoint,
            kubeconfig.as_bytes(),
        ),
        renew_at,
    );
    env.store
        .apply(object)
        .await
        .map_err(|e| Env::store_failed(capw_reconcile::CONTROL_PLANE_AVAILABLE, &e))?;
    tracing::info!(cluster = %s.name, endpoint = %endpoint, renew_after = %renew_at, "kubeconfig stored for the hosted control plane");
    Ok(Some(renew_at))
}

/// How long a join token the host issues for a hosted control plane is valid; it is renewed
/// at half its life, as kubeadm's default token lives a day.
const JOIN_TOKEN_TTL: u64 = 24 * 60 * 60;

/// The item of the cluster's secrets recording what joins need as last applied to the hosted
/// API server (a digest of it), so it is applied again only when it changes.
const JOIN_ACCESS_ITEM: &str = "hosted-join-access.sha256";

/// What a worker needs to join a hosted control plane, kept by the host as a managed
/// service keeps it for its own: no machine ran `kubeadm init`, so the host writes into the
/// hosted API server what that would have left for joins (`cluster-info`, the bootstrap RBAC;
/// [`capw_workload::JoinAccess`]), issues a bootstrap token and keeps it valid there (renewed
/// at half its life), and stores it beside the cluster CA as the join credentials the
/// bootstrap provider gets. Whether joins may go on in this pass: only when the pass began with
/// all of it in place, since the pass makes join data from the secrets as it read them; false
/// when this pass wrote something or waits for the kubeconfig it stored (the next pass goes on).
async fn keep_joins(
    env: &Env,
    s: &Snapshot,
    cas: &ClusterCas,
    endpoint: &str,
) -> Result<bool, ActionNote> {
    use capw_reconcile::JoinTokenView;
    use capw_text::error_chain as chain;
    use capw_workload::JoinAccess;

    use crate::pass::convert::{core_join_token, workload_bootstrap_token};

    let Some(cache) = env.cluster_cache.as_deref() else {
        return Ok(true);
    };
    let Some(kubeconfig) = s.kubeconfig.as_ref().filter(|k| k.endpoint == endpoint) else {
        return Ok(false);
    };
    let cluster = s.cluster_id();
    let items = s.secrets.clone().unwrap_or_default();
    let item = |name: &str| {
        items
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
    };

    let access = JoinAccess::new(cas.cluster_certificate(), &format!("https://{endpoint}"));
    let access_digest = digest(&serde_json::json!({
        "cluster-info": access.cluster_info(),
        "objects": access.names(),
    }));
    let access_current = item(JOIN_ACCESS_ITEM).as_deref() == Some(access_digest.as_bytes());
    if !access_current {
        cache
            .apply_join_access(&cluster, &kubeconfig.value, &access)
            .await
            .map_err(|e| ActionNote::host_failed(COND, "WorkloadWriteFailed", chain(&e)))?;
        tracing::info!(cluster = %s.name, objects = ?access.names(), "wrote what joins need into the hosted control plane");
    }

    let now = crate::pass::snapshot::now_seconds();
    let stored = s.join_credentials().and_then(|j| j.token);
    let fresh = match &stored {
        None => false,
        Some(token) => {
            let presence = cache
                .bootstrap_token(&cluster, &kubeconfig.value, &token.id)
                .await
                .map_err(|e| chain(&e));
            match core_join_token(token, presence, now) {
                JoinTokenView::Valid { .. } => true,
                JoinTokenView::Unknown { message } => {
                    return Err(ActionNote::host_failed(
                        COND,
                        "WorkloadReadFailed",
                        format!("looking at the join token: {message}"),
                    ));
                }
                _ => false,
            }
        }
    };
    if fresh && access_current {
        return Ok(true);
    }
    let token = match stored.filter(|_| fresh) {
        Some(token) => token,
        None => {
            let token =
                new_join_token().map_err(|e| ActionNote::host_failed(COND, "TokenError", e))?;
            let written = workload_bootstrap_token(&token, now);
            // The workload cluster first: a pass cut here leaves an unused token there (the
            // token cleaner deletes it at its expiry), never credentials it does not accept.
            cache
                .write_bootstrap_token(&cluster, &kubeconfig.value, &written)
                .await
                .map_err(|e| ActionNote::host_failed(COND, "WorkloadWriteFailed", chain(&e)))?;
            tracing::info!(cluster = %s.name, token = %token.id, "join token issued for the hosted control plane");
            token
        }
    };
    let mut stored_items: crate::objects::SecretItems = items
        .iter()
        .filter(|(n, _)| n != SERVICE_JOIN_TOKEN_ITEM && n != JOIN_ACCESS_ITEM)
        .cloned()
        .collect();
    let token_json = serde_json::to_vec(&token)
        .map_err(|e| ActionNote::host_failed(COND, "WorkloadWriteFailed", e.to_string()))?;
    stored_items.push((SERVICE_JOIN_TOKEN_ITEM.to_owned(), token_json));
    stored_items.push((JOIN_ACCESS_ITEM.to_owned(), access_digest.into_bytes()));
    let object = secret_object(&s.namespace, &s.name, &s.uid, &stored_items);
    env.store
        .apply(object)
        .await
        .map_err(|e| Env::store_failed(COND, &e))?;
    Ok(false)
}

/// A fresh bootstrap token, `[a-z0-9]{6}.[a-z0-9]{16}`, from the system's random source: each
/// character from a random byte below 252 (7 × 36), so that none is likelier than another.
fn new_join_token() -> Result<capw_runtime::bootstrap::JoinToken, String> {
    const ALPHABET: &[u8; 36] = b"abcdefghijklmnopqrstuvwxyz0123456789";
    let mut chars = String::with_capacity(22);
    let mut bytes = [0u8; 64];
    while chars.len() < 22 {
        getrandom::fill(&mut bytes).map_err(|e| format!("the system's random source: {e}"))?;
        chars.extend(
            (bytes.iter())
                .filter(|b| **b < 252)
                .map(|b| char::from(ALPHABET[usize::from(b % 36)]))
                .take(22 - chars.len()),
        );
    }
    let (id, secret) = chars.split_at(6);
    Ok(capw_runtime::bootstrap::JoinToken {
        item: SERVICE_JOIN_TOKEN_ITEM.into(),
        id: id.to_owned(),
        secret: secret.to_owned(),
        ttl_seconds: JOIN_TOKEN_TTL,
        extra_groups: vec![capw_workload::JOIN_TOKEN_GROUP.into()],
    })
}

/// `DeleteControlPlane` for the hosted shape: delete every object applied for the Cluster
/// (the host does it, not the garbage collector), then record the control plane deleted.
pub(crate) async fn delete(env: &Env, s: &Snapshot) -> ActionNote {
    let owner = owner(s);
    if let Some(management) = &env.config.management {
        let listed = match management.list(&owner).await {
            Ok(listed) => listed,
            Err(e) => return Env::store_failed(COND, &e),
        };
        let refs: Vec<ObjectRef> = listed.iter().filter_map(ObjectRef::of).collect();
        if let Err(note) = leave_datastores(env, s, &listed).await {
            return note;
        }
        if !refs.is_empty() {
            if let Err(e) = management.delete(&owner, &refs).await {
                return Env::store_failed(COND, &e);
            }
            tracing::info!(cluster = %s.name, objects = refs.len(), "deleting the hosted control plane's objects");
            return ActionNote {
                condition: Some((
                    COND,
                    "Deleting".into(),
                    format!(
                        "deleting {} object(s) in the management cluster",
                        refs.len()
                    ),
                )),
                requeue: Some(std::time::Duration::from_secs(1)),
                ..ActionNote::done()
            };
        }
    }
    env.record_service_deleted(s).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn join_tokens_have_kubeadms_form_and_differ() {
        let a = new_join_token().unwrap();
        let b = new_join_token().unwrap();
        for t in [&a, &b] {
            assert_eq!((t.id.len(), t.secret.len()), (6, 16), "{t:?}");
            assert!(
                (t.id.bytes().chain(t.secret.bytes()))
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit()),
                "{t:?}"
            );
            assert_eq!(t.extra_groups, [capw_workload::JOIN_TOKEN_GROUP]);
        }
        assert_ne!((a.id, a.secret), (b.id, b.secret));
    }
}
