//! Shards: with `--shards N` (N > 1), the replicas split the Clusters between them, each
//! shard held through its own `coordination.k8s.io` Lease, instead of one leader doing all.
//!
//! A Cluster belongs to shard [`shard_of`]: FNV-1a (64 bits, the published offset basis and
//! prime) of `<namespace>/<name>`, modulo N. It is the same in every process and release, so
//! replicas of different versions agree on which shard a Cluster is in.
//!
//! Every replica runs [`Shards::run`]: each renew period it lists the group's Leases (one
//! request), renews its own membership Lease `<name>-member-<identity>` and the shard Leases
//! `<name>-shard-<i>` it holds, and takes free or expired shard Leases up to its share. Every
//! write names the `resourceVersion` it read ([`LeaderLease::try_acquire_from`]): two replicas
//! never both win a shard.
//!
//! # Guarantees
//!
//! - A replica acts on a shard's Clusters only until its *renew deadline*: the start of its
//!   last successful renewal plus `duration - renew_every`. Another replica can take the
//!   shard only once `renewTime + duration` has passed, a renew period later; a pass still
//!   running at the deadline is cut short (safe: a machine's intent is stored before it is
//!   created), so two replicas never act on one Cluster at once.
//! - A replica holds at most `ceil(N / live replicas)` shards, live replicas being the
//!   unexpired membership Leases; one above its share releases the extra shards (after its
//!   passes on them stopped), so a replica that joins gets its share.
//! - A replica that gains a shard passes over that shard's Clusters at once
//!   ([`gained_clusters`]); the Clusters of shards it does not hold are left alone.
//! - A killed replica's shards are free `duration` after its last renewal, and taken at the
//!   others' next try: within `duration + renew_every`.
//!
//! # Caveats
//!
//! Every replica must be given the same N: replicas that disagree split the Clusters
//! differently, and a Cluster could be acted on by two of them.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use capw_api::Cluster;
use futures::StreamExt as _;
use futures::stream::BoxStream;
use k8s_openapi::api::coordination::v1::Lease;
use kube::api::{Api, DeleteParams, ListParams, Preconditions};
use kube::runtime::reflector::{ObjectRef, Store};
use kube::{Client, ResourceExt};
use tokio::sync::watch;
use tokio::time::Instant;

use crate::leader::{LeaderLease, LeaseConfig, expired};

/// Label on every Lease of a shard group (its value: the group's name), so that one list
/// reads them all.
pub const SHARD_GROUP_LABEL: &str = "capw.dev/shard-group";

/// How the Clusters are split.
#[derive(Clone, Debug)]
pub struct ShardConfig {
    /// Number of shards; every replica must be given the same.
    pub shards: u32,
    /// The group: `name` prefixes the Lease names (`<name>-shard-<i>`,
    /// `<name>-member-<identity>`); namespace, identity, duration and renew period as for
    /// leader election.
    pub lease: LeaseConfig,
}

impl ShardConfig {
    /// How long after a renewal started this replica may act on the shard.
    fn renew_deadline(&self) -> Duration {
        self.lease.duration.saturating_sub(self.lease.renew_every)
    }

    fn shard_lease_name(&self, shard: usize) -> String {
        format!("{}-shard-{shard}", self.lease.name)
    }

    fn member_prefix(&self) -> String {
        format!("{}-member-", self.lease.name)
    }
}

/// The shard of Cluster `namespace/name` among `shards`: FNV-1a 64 of `<namespace>/<name>`
/// modulo `shards` (0 when `shards` is 0 or 1).
pub fn shard_of(namespace: &str, name: &str, shards: u32) -> u32 {
    let hash = fnv1a(
        namespace
            .bytes()
            .chain(std::iter::once(b'/'))
            .chain(name.bytes()),
    );
    u32::try_from(hash % u64::from(shards.max(1))).unwrap_or(0)
}

/// FNV-1a, 64 bits: offset basis 0xcbf29ce484222325, prime 0x100000001b3.
fn fnv1a(bytes: impl IntoIterator<Item = u8>) -> u64 {
    bytes.into_iter().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// A Lease name from an identity: Lease names are DNS subdomains.
fn lease_safe(identity: &str) -> String {
    let name: String = identity
        .to_ascii_lowercase()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '.' {
                c
            } else {
                '-'
            }
        })
        .collect();
    let name = name.trim_matches(|c: char| !c.is_ascii_alphanumeric());
    // Long identities keep a hash of the whole, so two that share a prefix stay apart.
    if name.len() > 200 {
        format!("{}-{:016x}", &name[..180], fnv1a(identity.bytes()))
    } else {
        name.to_owned()
    }
}

/// A shard this replica holds: until when it may act, and the term of the hold (a new term
/// each time the shard is taken or renewed after its deadline lapsed, so that its Clusters
/// are passed over again).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Hold {
    until: Instant,
    term: u64,
}

/// This replica's shards; cheap to clone.
#[derive(Clone)]
pub struct Shards {
    inner: Arc<Inner>,
}

struct Inner {
    config: ShardConfig,
    api: Api<Lease>,
    member: LeaderLease,
    leases: Vec<LeaderLease>,
    held: watch::Sender<Vec<Option<Hold>>>,
    /// Passes running on each shard, so that a shard is released only once they stopped.
    running: Vec<AtomicUsize>,
}

/// One shard Lease as listed.
#[derive(Clone, Debug, Default)]
struct ShardView {
    holder: Option<String>,
    /// Held by someone and renewed within its duration.
    live: bool,
}

/// What one step does with the shard Leases.
#[derive(Debug, Default, PartialEq, Eq)]
struct Plan {
    /// Held, to renew.
    renew: Vec<usize>,
    /// Held here, but another replica holds the Lease now: stop at once.
    lost: Vec<usize>,
    /// Held beyond this replica's share: stop and release.
    release: Vec<usize>,
    /// Free shards to try, in order, while below the share.
    acquire: Vec<usize>,
}

/// The pure part of a step: from the listed Leases and what this replica holds, what to
/// renew, drop, release and try, with at most `share` shards kept. Free shards are tried
/// from `start` on, so that replicas (each with its own start) do not all race for shard 0.
fn plan(views: &[ShardView], held: &[bool], me: &str, share: usize, start: usize) -> Plan {
    let mut plan = Plan::default();
    for (i, view) in views.iter().enumerate() {
        if !held[i] {
            continue;
        }
        match &view.holder {
            Some(holder) if holder != me && view.live => plan.lost.push(i),
            _ => plan.renew.push(i),
        }
    }
    if plan.renew.len() > share {
        plan.release = plan.renew.split_off(share);
    } else if plan.renew.len() < share {
        let n = views.len();
        plan.acquire = (0..n)
            .map(|k| (start + k) % n)
            .filter(|&i| !held[i])
            .filter(|&i| !views[i].live || views[i].holder.as_deref() == Some(me))
            .collect();
    }
    plan
}

impl Shards {
    /// This replica's handle on the shard group of `config`; nothing is held until
    /// [`Self::run`] runs.
    pub fn new(client: Client, config: ShardConfig) -> Self {
        let labels = BTreeMap::from([(SHARD_GROUP_LABEL.to_owned(), config.lease.name.clone())]);
        let lease = |name: String| {
            LeaderLease::new(
                client.clone(),
                LeaseConfig {
                    name,
                    ..config.lease.clone()
                },
            )
            .with_labels(labels.clone())
        };
        let shards = usize::try_from(config.shards.max(1)).unwrap_or(1);
        let member = lease(format!(
            "{}{}",
            config.member_prefix(),
            lease_safe(&config.lease.identity)
        ));
        let leases = (0..shards)
            .map(|i| lease(config.shard_lease_name(i)))
            .collect();
        Shards {
            inner: Arc::new(Inner {
                api: Api::namespaced(client, &config.lease.namespace),
                member,
                leases,
                held: watch::Sender::new(vec![None; shards]),
                running: (0..shards).map(|_| AtomicUsize::new(0)).collect(),
                config,
            }),
        }
    }

    /// The shards this replica may act on now.
    pub fn held(&self) -> Vec<u32> {
        let now = Instant::now();
        self.inner
            .held
            .borrow()
            .iter()
            .enumerate()
            .filter(|(_, h)| h.is_some_and(|h| h.until > now))
            .filter_map(|(i, _)| u32::try_from(i).ok())
            .collect()
    }

    /// Takes, renews and balances the shards every renew period; never returns (drop it to
    /// stop: the Leases then expire, as a killed replica's do, or call [`Self::release_all`]).
    pub async fn run(&self) {
        let mut term = 0;
        loop {
            self.step(&mut term).await;
            tokio::time::sleep(self.inner.config.lease.renew_every).await;
        }
    }

    /// Stops acting on every shard, then releases their Leases and the membership Lease, so
    /// that the other replicas take them at their next try.
    pub async fn release_all(&self) {
        for shard in 0..self.inner.leases.len() {
            if self.inner.held.borrow()[shard].is_some() {
                self.stop_acting(shard).await;
                self.release(shard).await;
            }
        }
        if let Err(e) = self.inner.member.release().await {
            tracing::warn!(error = %crate::chain(&e), "releasing the membership lease");
        }
    }

    async fn step(&self, term: &mut u64) {
        let inner = &self.inner;
        let config = &inner.config;
        let me = config.lease.identity.as_str();
        let started = Instant::now();
        let selector = format!("{SHARD_GROUP_LABEL}={}", config.lease.name);
        let listed = match inner
            .api
            .list(&ListParams::default().labels(&selector))
            .await
        {
            Ok(list) => list.items,
            Err(e) => {
                tracing::warn!(error = %e, "listing the shard leases");
                return;
            }
        };
        let mut by_name: BTreeMap<String, Lease> =
            listed.into_iter().map(|l| (l.name_any(), l)).collect();

        let mine = by_name.remove(&inner.member.config().name);
        if let Err(e) = inner.member.try_acquire_from(mine).await {
            tracing::warn!(error = %crate::chain(&e), "renewing the membership lease");
        }
        let prefix = config.member_prefix();
        let mut live = 1;
        for (name, lease) in by_name.iter().filter(|(n, _)| n.starts_with(&prefix)) {
            if lease.spec.as_ref().is_some_and(|s| !expired(s)) {
                live += 1;
            } else {
                self.forget_member(name, lease).await;
            }
        }
        let share = inner.leases.len().div_ceil(live);

        let mut current: Vec<Option<Lease>> = (0..inner.leases.len())
            .map(|i| by_name.remove(&config.shard_lease_name(i)))
            .collect();
        let views: Vec<ShardView> = current
            .iter()
            .map(|lease| {
                let spec = lease.as_ref().and_then(|l| l.spec.as_ref());
                let holder = spec
                    .and_then(|s| s.holder_identity.clone())
                    .filter(|h| !h.is_empty());
                ShardView {
                    live: holder.is_some() && spec.is_some_and(|s| !expired(s)),
                    holder,
                }
            })
            .collect();
        let held: Vec<bool> = inner.held.borrow().iter().map(Option::is_some).collect();
        let start = usize::try_from(fnv1a(me.bytes()) % inner.leases.len() as u64).unwrap_or(0);
        let plan = plan(&views, &held, me, share, start);

        for &shard in &plan.lost {
            tracing::warn!(shard, holder = ?views[shard].holder, "shard taken by another replica");
            self.stop_acting(shard).await;
        }
        let until = started + config.renew_deadline();
        let mut kept = 0;
        for &shard in &plan.renew {
            match inner.leases[shard]
                .try_acquire_from(current[shard].take())
                .await
            {
                Ok(true) => {
                    kept += 1;
                    inner.held.send_modify(|held| {
                        let lapsed = held[shard].is_none_or(|h| h.until <= started);
                        if lapsed {
                            *term += 1;
                        }
                        held[shard] = Some(Hold {
                            until,
                            term: if lapsed {
                                *term
                            } else {
                                held[shard].map_or(*term, |h| h.term)
                            },
                        });
                    });
                }
                // A race with a write since the list; the next list tells whose it is, and
                // the renew deadline bounds how long this replica acts meanwhile.
                Ok(false) => kept += 1,
                Err(e) => {
                    tracing::warn!(shard, error = %crate::chain(&e), "renewing a shard lease");
                    kept += 1;
                }
            }
        }
        for &shard in &plan.release {
            tracing::info!(
                shard,
                share,
                live,
                "releasing a shard beyond this replica's share"
            );
            self.stop_acting(shard).await;
            self.release(shard).await;
        }
        for &shard in &plan.acquire {
            if kept >= share {
                break;
            }
            match inner.leases[shard]
                .try_acquire_from(current[shard].take())
                .await
            {
                Ok(true) => {
                    kept += 1;
                    *term += 1;
                    tracing::info!(shard, share, live, "shard taken");
                    inner.held.send_modify(|held| {
                        held[shard] = Some(Hold { until, term: *term });
                    });
                }
                Ok(false) => {}
                Err(e) => tracing::debug!(shard, error = %crate::chain(&e), "taking a shard"),
            }
        }
    }

    /// Stops acting on `shard` and waits (at most a renew deadline) until its running passes
    /// are cut short.
    async fn stop_acting(&self, shard: usize) {
        self.inner.held.send_modify(|held| held[shard] = None);
        let give_up = Instant::now() + self.inner.config.renew_deadline();
        while self.inner.running[shard].load(Ordering::SeqCst) > 0 && Instant::now() < give_up {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    async fn release(&self, shard: usize) {
        if let Err(e) = self.inner.leases[shard].release().await {
            tracing::warn!(shard, error = %crate::chain(&e), "releasing a shard lease");
        }
    }

    /// Deletes the expired membership Lease of a replica that is gone, unless it was
    /// renewed since it was read.
    async fn forget_member(&self, name: &str, lease: &Lease) {
        let params = DeleteParams {
            preconditions: Some(Preconditions {
                resource_version: lease.resource_version(),
                uid: None,
            }),
            ..DeleteParams::default()
        };
        if let Err(e) = self.inner.api.delete(name, &params).await {
            tracing::debug!(lease = name, error = %e, "deleting an expired membership lease");
        }
    }

    /// A pass's hold on the shard of Cluster `namespace/name`, if this replica may act on it
    /// now.
    fn guard(&self, namespace: &str, name: &str) -> Option<PassGuard> {
        let shard = usize::try_from(shard_of(namespace, name, self.inner.config.shards)).ok()?;
        // Counted before the check: a shard being released either sees this pass running or
        // this pass sees the shard gone.
        self.inner.running[shard].fetch_add(1, Ordering::SeqCst);
        let guard = PassGuard {
            inner: self.inner.clone(),
            shard,
        };
        let now = Instant::now();
        self.inner.held.borrow()[shard]
            .is_some_and(|h| h.until > now)
            .then_some(guard)
    }
}

/// A running pass on a shard.
struct PassGuard {
    inner: Arc<Inner>,
    shard: usize,
}

impl PassGuard {
    /// Resolves when this replica must stop acting on the shard: it was released or taken,
    /// or its renew deadline passed.
    async fn lost(&self) {
        let mut held = self.inner.held.subscribe();
        loop {
            let hold = held.borrow_and_update()[self.shard];
            let Some(hold) = hold.filter(|h| h.until > Instant::now()) else {
                return;
            };
            tokio::select! {
                () = tokio::time::sleep_until(hold.until) => {}
                changed = held.changed() => if changed.is_err() { return },
            }
        }
    }
}

impl Drop for PassGuard {
    fn drop(&mut self) {
        self.inner.running[self.shard].fetch_sub(1, Ordering::SeqCst);
    }
}

/// Runs `work` (a pass over Cluster `namespace/name`) if this replica may act on the
/// Cluster's shard, and cuts it short when it no longer may; `None` when it did not run to
/// its end. Without shards, `work` simply runs.
pub(crate) async fn while_held<F: Future>(
    shards: Option<&Shards>,
    namespace: &str,
    name: &str,
    work: F,
) -> Option<F::Output> {
    let Some(shards) = shards else {
        return Some(work.await);
    };
    let guard = shards.guard(namespace, name)?;
    tokio::select! {
        output = work => Some(output),
        () = guard.lost() => {
            tracing::info!(namespace, name, "shard no longer held: the pass stops");
            None
        }
    }
}

/// The Clusters (from the controller's `store`) of each shard this replica gains, once the
/// store has its first list; nothing without shards.
pub(crate) fn gained_clusters(
    shards: Option<&Shards>,
    store: Store<Cluster>,
) -> BoxStream<'static, ObjectRef<Cluster>> {
    let Some(shards) = shards else {
        return futures::stream::empty().boxed();
    };
    let count = shards.inner.config.shards;
    let held = shards.inner.held.subscribe();
    let seen: Vec<Option<u64>> = Vec::new();
    futures::stream::unfold(
        (held, store, seen, false),
        move |(mut held, store, mut seen, mut ready)| async move {
            if !ready {
                store.wait_until_ready().await.ok()?;
                ready = true;
            }
            loop {
                let terms: Vec<Option<u64>> = held
                    .borrow_and_update()
                    .iter()
                    .map(|h| h.map(|h| h.term))
                    .collect();
                let gained: BTreeSet<u32> = terms
                    .iter()
                    .enumerate()
                    .filter(|(i, t)| t.is_some() && seen.get(*i).copied().flatten() != **t)
                    .filter_map(|(i, _)| u32::try_from(i).ok())
                    .collect();
                seen = terms;
                if !gained.is_empty() {
                    let clusters: Vec<ObjectRef<Cluster>> = store
                        .state()
                        .iter()
                        .filter(|c| {
                            let namespace = c.namespace().unwrap_or_default();
                            gained.contains(&shard_of(&namespace, &c.name_any(), count))
                        })
                        .map(|c| ObjectRef::from_obj(c.as_ref()))
                        .collect();
                    tracing::debug!(
                        ?gained,
                        clusters = clusters.len(),
                        "passing over gained shards"
                    );
                    return Some((futures::stream::iter(clusters), (held, store, seen, ready)));
                }
                held.changed().await.ok()?;
            }
        },
    )
    .flatten()
    .boxed()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shard_of_a_cluster_is_fixed_across_processes_and_releases() {
        // FNV-1a 64's published test vectors: a change of the hash fails here.
        assert_eq!(fnv1a(*b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(*b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a(*b"foobar"), 0x8594_4171_f739_67e8);
        assert_eq!(
            shard_of("default", "alpha", 9),
            u32::try_from(fnv1a(*b"default/alpha") % 9).unwrap()
        );
        assert_eq!(shard_of("default", "alpha", 1), 0);
        assert_eq!(shard_of("default", "alpha", 0), 0);
    }

    #[test]
    fn clusters_spread_over_the_shards() {
        let mut counts = [0usize; 6];
        for i in 0..600 {
            counts[shard_of("ns", &format!("cluster-{i}"), 6) as usize] += 1;
        }
        assert!(
            counts.iter().all(|&c| (60..=140).contains(&c)),
            "{counts:?}"
        );
    }

    fn view(holder: Option<&str>, live: bool) -> ShardView {
        ShardView {
            holder: holder.map(str::to_owned),
            live,
        }
    }

    #[test]
    fn a_replica_takes_free_and_expired_shards_up_to_its_share() {
        let views = [
            view(Some("b"), true),
            view(None, false),
            view(Some("c"), false),
            view(Some("a"), false),
        ];
        let p = plan(&views, &[false; 4], "a", 2, 0);
        assert_eq!(p.acquire, vec![1, 2, 3]);
        assert!(p.renew.is_empty() && p.release.is_empty() && p.lost.is_empty());
        // Tried from its own start on.
        assert_eq!(plan(&views, &[false; 4], "a", 2, 2).acquire, vec![2, 3, 1]);
    }

    #[test]
    fn a_replica_above_its_share_releases_the_extra_shards() {
        let views = [
            view(Some("a"), true),
            view(Some("a"), true),
            view(Some("a"), true),
            view(None, false),
        ];
        let p = plan(&views, &[true, true, true, false], "a", 2, 0);
        assert_eq!(p.renew, vec![0, 1]);
        assert_eq!(p.release, vec![2]);
        assert!(p.acquire.is_empty());
    }

    #[test]
    fn a_shard_another_replica_holds_is_dropped_at_once() {
        let views = [view(Some("b"), true), view(Some("b"), false)];
        let p = plan(&views, &[true, true], "a", 2, 0);
        assert_eq!(p.lost, vec![0]);
        // An expired Lease still names its last holder: this replica renews it if it can.
        assert_eq!(p.renew, vec![1]);
    }

    #[test]
    fn identities_become_lease_names() {
        assert_eq!(lease_safe("Capw_Controller-0"), "capw-controller-0");
        assert_eq!(lease_safe("host.example"), "host.example");
        assert!(lease_safe(&"x".repeat(300)).len() < 253);
    }
}
