//! capw's access to workload clusters, as Cluster API's ClusterCache gives it.
//!
//! Start with [`ClusterCache`]: built from a [`ClusterCacheConfig`], it keeps one kube client
//! per workload cluster, made from the admin kubeconfig the host stores in the cluster's
//! `<cluster>-kubeconfig` Secret, each with a watch-backed store of the cluster's Nodes.
//! [`ClusterCache::observe`] answers, within a bounded time, what a reconcile pass needs as
//! plain data ([`WorkloadObservation`]): whether the API answers through the endpoint, and
//! the Nodes with their provider ids and Ready conditions. [`ClusterCache::node_changes`]
//! announces each cluster whose Nodes changed, so a driver need not wait for a requeue.
//!
//! # Guarantees
//!
//! - An unreachable workload cluster costs the caller at most the probe timeout: nothing
//!   waits on a connection without a deadline, and no lock is held across network I/O, so
//!   observing one cluster never stalls the observation of another.
//! - Nothing read from a kubeconfig (keys, certificates, tokens) appears in an error, an
//!   observation or a log line; messages name the endpoint only.
//! - At most [`ClusterCacheConfig::max_clusters`] clients live at once; the least recently
//!   observed one goes first, with its watch.

mod cache;
mod config;
mod connection;
mod drain;
mod error;
mod etcd;
mod join_access;
mod observation;
mod shared_etcd;
mod token;

pub use cache::{ClusterCache, ClusterId};
pub use config::ClusterCacheConfig;
pub use drain::{BlockedPod, DrainRound};
pub use error::ClusterCacheError;
pub use etcd::{EtcdAccess, EtcdError, EtcdMember, EtcdMembership};
pub use join_access::{JOIN_TOKEN_GROUP, JoinAccess};
pub use observation::{
    ApiAvailability, MAX_NODE_CONDITIONS, NodeReadiness, ObservedCondition, ObservedNode,
    ReadyStatus, WorkloadObservation, sanitize_message, sanitize_reason,
};
pub use shared_etcd::{DatastoreAccess, SharedEtcd, datastore_prefix, datastore_user};
pub use token::{
    BootstrapToken, TOKEN_NAMESPACE, TOKEN_SECRET_TYPE, TokenPresence, token_secret,
    token_secret_name,
};
