//! How the [`crate::ClusterCache`] connects and how long it waits.

use std::time::Duration;

/// Clients kept at most by default: a management cluster of this many workload clusters
/// keeps every client warm; beyond it the least recently observed are rebuilt on demand.
pub const DEFAULT_MAX_CLUSTERS: usize = 256;

/// Default TCP connect timeout of a workload client: a black-holed endpoint fails fast
/// instead of holding a pass for the operating system's minutes.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(2);

/// Default bound of the `/readyz` probe, connection included.
pub const DEFAULT_PROBE_TIMEOUT: Duration = Duration::from_secs(3);

/// Default wait for a fresh Node watch's first list, once the API answered.
pub const DEFAULT_SYNC_TIMEOUT: Duration = Duration::from_secs(3);

/// Default first retry hint after a failed probe; doubled per consecutive failure.
pub const DEFAULT_BASE_RETRY: Duration = Duration::from_secs(1);

/// Default longest retry hint after failed probes.
pub const DEFAULT_MAX_RETRY: Duration = Duration::from_secs(30);

/// How the cache connects, how long it waits, how much it keeps.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClusterCacheConfig {
    /// Clients kept at most (at least one is always kept).
    pub max_clusters: usize,
    /// TCP connect timeout of every workload client.
    pub connect_timeout: Duration,
    /// Bound of one `/readyz` probe through the endpoint.
    pub probe_timeout: Duration,
    /// How long an observation waits for a new client's first list of Nodes.
    pub sync_timeout: Duration,
    /// First retry hint after a failed probe.
    pub base_retry: Duration,
    /// Longest retry hint after consecutive failed probes.
    pub max_retry: Duration,
}

impl Default for ClusterCacheConfig {
    fn default() -> Self {
        ClusterCacheConfig {
            max_clusters: DEFAULT_MAX_CLUSTERS,
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            probe_timeout: DEFAULT_PROBE_TIMEOUT,
            sync_timeout: DEFAULT_SYNC_TIMEOUT,
            base_retry: DEFAULT_BASE_RETRY,
            max_retry: DEFAULT_MAX_RETRY,
        }
    }
}

impl ClusterCacheConfig {
    /// The retry hint after `failures` consecutive failed probes (at least one).
    pub fn retry_after(&self, failures: u32) -> Duration {
        let factor = 1u32 << failures.saturating_sub(1).min(16);
        self.base_retry.saturating_mul(factor).min(self.max_retry)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retries_double_up_to_the_maximum() {
        let config = ClusterCacheConfig::default();
        assert_eq!(config.retry_after(1), Duration::from_secs(1));
        assert_eq!(config.retry_after(2), Duration::from_secs(2));
        assert_eq!(config.retry_after(4), Duration::from_secs(8));
        assert_eq!(config.retry_after(40), config.max_retry);
    }
}
