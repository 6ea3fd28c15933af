//! Lookups derived from the records, so that a request costs what it finds, not what the
//! cloud holds: the ids of each kind by cluster and by client token, and the resources in a
//! timed state (`provisioning`, `creating`, `updating`, `pending`, `booting`) in the order
//! they fall due.
//!
//! Never stored: the state file holds the records only, and [`CloudState::rebuild_index`]
//! derives the index from them when a state is loaded. Every operation that adds, removes or
//! moves a record keeps it in step ([`Index::add`], [`Index::remove`], [`Index::retime`]);
//! the tests compare it with one built afresh after every step.

use std::collections::{BTreeMap, BTreeSet};

use super::{
    CloudState, ControlPlaneRecord, InstanceRecord, LoadBalancerRecord, MAX_BLOCK, NetworkRecord,
    millis,
};
use crate::config::Timings;
use crate::model::{ControlPlaneState, InstanceState, LoadBalancerState};

/// Everything derived from the records.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct Index {
    networks: KindIndex,
    load_balancers: KindIndex,
    instances: KindIndex,
    control_planes: KindIndex,
    /// The blocks of 10.0.0.0/8 the networks hold.
    network_blocks: BTreeSet<u32>,
    /// The resources in a timed state, by phase, then by when the phase began.
    timers: BTreeSet<Timer>,
}

/// The ids of one kind by cluster and by client token, each set in id order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct KindIndex {
    by_cluster: BTreeMap<String, BTreeSet<u64>>,
    by_token: BTreeMap<String, BTreeSet<u64>>,
}

/// A timed state a resource is in, each with its own delay.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Phase {
    /// A load balancer `provisioning`, since its creation.
    LoadBalancerProvisioning,
    /// A managed control plane `creating`, since its creation.
    ControlPlaneCreating,
    /// A managed control plane `updating`, since its last update.
    ControlPlaneUpdating,
    /// An instance `pending`, since its creation.
    InstancePending,
    /// An instance `booting`, counted from its creation (it was `pending` first).
    InstanceBooting,
    /// A managed control plane's bootstrap token, since it was issued: renewed past half its
    /// life, whatever its state (a `failed` one's too, so that the credentials it still
    /// answers carry a valid token).
    JoinTokenRenewal,
}

impl Phase {
    /// How long after `since_ms` a resource in this phase moves on.
    fn delay_ms(self, t: &Timings) -> u64 {
        match self {
            Phase::LoadBalancerProvisioning => millis(t.load_balancer),
            Phase::ControlPlaneCreating => millis(t.control_plane_create),
            Phase::ControlPlaneUpdating => millis(t.control_plane_update),
            Phase::InstancePending => millis(t.provision),
            Phase::InstanceBooting => millis(t.provision).saturating_add(millis(t.boot)),
            Phase::JoinTokenRenewal => millis(t.join_token_ttl) / 2,
        }
    }
}

/// A resource in a timed state. Ordered by phase, then start, so the resources of a phase
/// that are due come first: every resource of a phase has the same delay.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct Timer {
    pub(super) phase: Phase,
    /// When the phase began, in milliseconds since the Unix epoch.
    pub(super) since_ms: u64,
    /// The resource's number.
    pub(super) id: u64,
}

/// A record the index knows: where its kind lives, the keys it is found by and the timed
/// state it is in.
pub(super) trait Indexed: Sized {
    /// Every record of this kind, by id.
    fn records(state: &CloudState) -> &BTreeMap<u64, Self>;
    /// This kind's lookups.
    fn lookups(index: &Index) -> &KindIndex;
    /// This kind's lookups, to change.
    fn lookups_mut(index: &mut Index) -> &mut KindIndex;
    /// What it is found by.
    fn keys(&self) -> Keys<'_>;
    /// The client token it is found by; instances have none here, as
    /// `CloudState::instance_tokens` holds theirs.
    fn token(&self) -> Option<&str>;
    /// The timed state it is in, if any.
    fn timer(&self) -> Option<Timer>;
    /// A second timer that runs whatever its state (a managed control plane's token
    /// renewal), if any.
    fn renewal_timer(&self) -> Option<Timer> {
        None
    }
    /// The network block it holds, if any.
    fn network_block(&self) -> Option<u32> {
        None
    }
}

/// What a record is found by.
pub(super) struct Keys<'a> {
    id: u64,
    cluster: &'a str,
    client_token: Option<&'a str>,
}

/// The part of [`Indexed`] that is the same for every kind: the state's field `$field` and
/// the index's of the same name hold `$record`s.
macro_rules! indexed_in {
    ($record:ty, $field:ident) => {
        fn records(state: &CloudState) -> &BTreeMap<u64, $record> {
            &state.$field
        }
        fn lookups(index: &Index) -> &KindIndex {
            &index.$field
        }
        fn lookups_mut(index: &mut Index) -> &mut KindIndex {
            &mut index.$field
        }
        fn keys(&self) -> Keys<'_> {
            Keys {
                id: self.id,
                cluster: &self.cluster,
                client_token: self.token(),
            }
        }
    };
}

impl KindIndex {
    fn add(&mut self, keys: Keys<'_>) {
        insert(&mut self.by_cluster, keys.cluster, keys.id);
        if let Some(token) = keys.client_token {
            insert(&mut self.by_token, token, keys.id);
        }
    }

    fn remove(&mut self, keys: Keys<'_>) {
        remove(&mut self.by_cluster, keys.cluster, keys.id);
        if let Some(token) = keys.client_token {
            remove(&mut self.by_token, token, keys.id);
        }
    }
}

fn insert(map: &mut BTreeMap<String, BTreeSet<u64>>, key: &str, id: u64) {
    match map.get_mut(key) {
        Some(ids) => {
            ids.insert(id);
        }
        None => {
            map.insert(key.to_owned(), BTreeSet::from([id]));
        }
    }
}

fn remove(map: &mut BTreeMap<String, BTreeSet<u64>>, key: &str, id: u64) {
    if let Some(ids) = map.get_mut(key) {
        ids.remove(&id);
        if ids.is_empty() {
            map.remove(key);
        }
    }
}

impl Index {
    /// Indexes `record`, which is being added to the state.
    pub(super) fn add<R: Indexed>(&mut self, record: &R) {
        R::lookups_mut(self).add(record.keys());
        for timer in [record.timer(), record.renewal_timer()]
            .into_iter()
            .flatten()
        {
            self.timers.insert(timer);
        }
        if let Some(block) = record.network_block() {
            self.network_blocks.insert(block);
        }
    }

    /// Forgets `record`, which has been removed from the state.
    pub(super) fn remove<R: Indexed>(&mut self, record: &R) {
        R::lookups_mut(self).remove(record.keys());
        for timer in [record.timer(), record.renewal_timer()]
            .into_iter()
            .flatten()
        {
            self.timers.remove(&timer);
        }
        if let Some(block) = record.network_block() {
            self.network_blocks.remove(&block);
        }
    }

    /// The lowest network block no network holds (block 0 is never used).
    pub(super) fn free_network_block(&self) -> Option<u32> {
        let mut candidate = 1;
        for &held in self.network_blocks.range(1..) {
            if held != candidate {
                break;
            }
            candidate += 1;
        }
        (candidate <= MAX_BLOCK).then_some(candidate)
    }

    /// Records that a resource left the timed state `before` for `after` (`None`: untimed).
    pub(super) fn retime(&mut self, before: Option<Timer>, after: Option<Timer>) {
        if before == after {
            return;
        }
        if let Some(before) = before {
            self.timers.remove(&before);
        }
        if let Some(after) = after {
            self.timers.insert(after);
        }
    }

    /// Takes out the resources in `phase` whose delay has passed at `now_ms`, earliest first.
    pub(super) fn take_due(&mut self, phase: Phase, now_ms: u64, timings: &Timings) -> Vec<Timer> {
        let delay = phase.delay_ms(timings);
        let start = Timer {
            phase,
            since_ms: 0,
            id: 0,
        };
        let due: Vec<Timer> = self
            .timers
            .range(start..)
            .take_while(|t| t.phase == phase && t.since_ms.saturating_add(delay) <= now_ms)
            .copied()
            .collect();
        for timer in &due {
            self.timers.remove(timer);
        }
        due
    }
}

impl CloudState {
    /// Derives the index from the records: for a state just deserialised, whose index is
    /// empty (it is never stored).
    pub(crate) fn rebuild_index(&mut self) {
        self.index = self.built_index();
    }

    /// The index the records call for.
    pub(super) fn built_index(&self) -> Index {
        let mut index = Index::default();
        self.networks.values().for_each(|r| index.add(r));
        self.load_balancers.values().for_each(|r| index.add(r));
        self.instances.values().for_each(|r| index.add(r));
        self.control_planes.values().for_each(|r| index.add(r));
        index
    }

    /// The records of kind `R` in `cluster`, or all of them when `None`, by id.
    pub(super) fn in_cluster<'a, R: Indexed>(
        &'a self,
        cluster: Option<&str>,
    ) -> Box<dyn Iterator<Item = &'a R> + 'a> {
        let records = R::records(self);
        match cluster {
            None => Box::new(records.values()),
            Some(cluster) => Box::new(
                R::lookups(&self.index)
                    .by_cluster
                    .get(cluster)
                    .into_iter()
                    .flatten()
                    .filter_map(|id| records.get(id)),
            ),
        }
    }

    /// The first record of kind `R` in `cluster`.
    pub(super) fn first_in_cluster<R: Indexed>(&self, cluster: &str) -> Option<&R> {
        self.in_cluster(Some(cluster)).next()
    }

    /// The first record of kind `R` created with client token `token`.
    pub(super) fn with_token<R: Indexed>(&self, token: &str) -> Option<&R> {
        let ids = R::lookups(&self.index).by_token.get(token)?;
        ids.iter().find_map(|id| R::records(self).get(id))
    }
}

impl Indexed for NetworkRecord {
    indexed_in!(NetworkRecord, networks);
    fn token(&self) -> Option<&str> {
        self.client_token.as_deref()
    }
    fn timer(&self) -> Option<Timer> {
        None
    }
    fn network_block(&self) -> Option<u32> {
        Some(self.block())
    }
}

impl Indexed for LoadBalancerRecord {
    indexed_in!(LoadBalancerRecord, load_balancers);
    fn token(&self) -> Option<&str> {
        self.client_token.as_deref()
    }
    fn timer(&self) -> Option<Timer> {
        (self.state == LoadBalancerState::Provisioning).then_some(Timer {
            phase: Phase::LoadBalancerProvisioning,
            since_ms: self.created_at_ms,
            id: self.id,
        })
    }
}

impl Indexed for InstanceRecord {
    indexed_in!(InstanceRecord, instances);
    fn token(&self) -> Option<&str> {
        None
    }
    fn timer(&self) -> Option<Timer> {
        let phase = match self.state {
            InstanceState::Pending => Phase::InstancePending,
            InstanceState::Booting => Phase::InstanceBooting,
            InstanceState::Running | InstanceState::Failed => return None,
        };
        Some(Timer {
            phase,
            since_ms: self.created_at_ms,
            id: self.id,
        })
    }
}

impl Indexed for ControlPlaneRecord {
    indexed_in!(ControlPlaneRecord, control_planes);
    fn token(&self) -> Option<&str> {
        self.client_token.as_deref()
    }
    fn timer(&self) -> Option<Timer> {
        let (phase, since_ms) = match self.state {
            ControlPlaneState::Creating => (Phase::ControlPlaneCreating, self.created_at_ms),
            ControlPlaneState::Updating => (Phase::ControlPlaneUpdating, self.updated_at_ms),
            // A failed service moves on only by a delete.
            ControlPlaneState::Ready | ControlPlaneState::Failed => return None,
        };
        Some(Timer {
            phase,
            since_ms,
            id: self.id,
        })
    }
    fn renewal_timer(&self) -> Option<Timer> {
        self.credentials.is_some().then_some(Timer {
            phase: Phase::JoinTokenRenewal,
            since_ms: self.token_issued_at_ms,
            id: self.id,
        })
    }
}
