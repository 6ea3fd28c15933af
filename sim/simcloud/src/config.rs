//! What a sim cloud is started with: where it listens, where it keeps its state, its token,
//! its zones, how long things take, and which faults it injects.

use std::net::{Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// Everything [`crate::SimCloud::start`] needs.
#[derive(Clone, Debug)]
pub struct SimCloudConfig {
    /// Where to listen; port 0 picks a free port, read back with
    /// [`crate::SimCloudHandle::addr`].
    pub listen: SocketAddr,
    /// The file the state is kept in: loaded at start when it exists, rewritten atomically after
    /// every change. `None` keeps the state in memory only.
    pub state_file: Option<PathBuf>,
    /// The bearer token every `/v1` request must carry.
    pub token: String,
    /// Zones instances can be placed in; the first is the default. Not empty.
    pub zones: Vec<String>,
    /// DNS suffix of load balancer and managed control plane hosts, e.g. `sim` gives
    /// `lb-1.sim`.
    pub domain: String,
    /// How long state transitions take.
    pub timings: Timings,
    /// Faults injected from the start; adjustable at runtime through `/v1/admin/faults`.
    pub faults: FaultConfig,
    /// How instances boot: checked and simulated (the default), or run as real local
    /// processes.
    pub boot: BootMode,
}

/// How the sim boots its instances.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum BootMode {
    /// Instances get addresses from their cluster's network and a booting instance only has
    /// its bootstrap data checked ([`crate::boot_check`]); nothing runs.
    #[default]
    Simulated,
    /// Instances and load balancers are local processes on loopback addresses, started from
    /// their bootstrap data ([`crate::machines`]).
    Real(RealBoot),
}

/// Where a real-boot sim finds its Kubernetes binaries and keeps its machines.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RealBoot {
    /// The root holding `<version>/bin/` for each Kubernetes version the cloud has an image
    /// for (`kubeadm`, `kube-apiserver`, `etcd`, `capw-node`...), e.g. `v1.35.4/bin/kubeadm`.
    pub kube_binaries: PathBuf,
    /// The directory holding one directory per instance and load balancer (`i-3/`, `lb-1/`);
    /// created when missing. Give each cloud its own.
    pub machines_dir: PathBuf,
}

impl SimCloudConfig {
    /// A sim on `127.0.0.1:0`, state in memory, zones `zone-a`..`zone-c`, domain `sim`,
    /// [`Timings::default`] and no faults.
    pub fn new(token: impl Into<String>) -> Self {
        SimCloudConfig {
            listen: SocketAddr::from((Ipv4Addr::LOCALHOST, 0)),
            state_file: None,
            token: token.into(),
            zones: ["zone-a", "zone-b", "zone-c"].map(String::from).to_vec(),
            domain: "sim".into(),
            timings: Timings::default(),
            faults: FaultConfig::default(),
            boot: BootMode::Simulated,
        }
    }

    /// The same, booting instances for real with `real`.
    pub fn with_real_boot(mut self, real: RealBoot) -> Self {
        self.boot = BootMode::Real(real);
        self
    }

    /// The same, keeping its state in `path`.
    pub fn with_state_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.state_file = Some(path.into());
        self
    }

    /// The same, with `timings`.
    pub fn with_timings(mut self, timings: Timings) -> Self {
        self.timings = timings;
        self
    }

    /// The same, injecting `faults` from the start.
    pub fn with_faults(mut self, faults: FaultConfig) -> Self {
        self.faults = faults;
        self
    }

    /// Checks the parts that can be wrong.
    ///
    /// # Errors
    ///
    /// An empty token, no zones, an empty or duplicate zone name, an empty domain, invalid
    /// fault rates, or a real boot with an empty path.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.token.is_empty() {
            return Err(ConfigError::EmptyToken);
        }
        if self.zones.is_empty() {
            return Err(ConfigError::NoZones);
        }
        for (i, zone) in self.zones.iter().enumerate() {
            if zone.is_empty() || self.zones[..i].contains(zone) {
                return Err(ConfigError::BadZone { zone: zone.clone() });
            }
        }
        if self.domain.is_empty() {
            return Err(ConfigError::EmptyDomain);
        }
        if let BootMode::Real(real) = &self.boot
            && (real.kube_binaries.as_os_str().is_empty()
                || real.machines_dir.as_os_str().is_empty())
        {
            return Err(ConfigError::EmptyRealBootPath);
        }
        self.faults.validate()
    }
}

/// How long the sim's resources take to change state. Each delay counts from the resource's
/// creation (or, for an update, from the update).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timings {
    /// An instance stays `pending` this long, then is `booting`.
    pub provision: Duration,
    /// An instance stays `booting` this long, then its bootstrap data is checked and it is
    /// `running` or `failed`.
    pub boot: Duration,
    /// A load balancer stays `provisioning` this long, then is `active`.
    pub load_balancer: Duration,
    /// A managed control plane stays `creating` this long, then is `ready`.
    pub control_plane_create: Duration,
    /// A managed control plane stays `updating` this long after a version update.
    pub control_plane_update: Duration,
    /// How long a managed control plane's bootstrap token is valid; it is renewed (a new
    /// token, with a new id) once past half of it.
    pub join_token_ttl: Duration,
}

/// The bootstrap token lifetime of [`Timings`] unless set: kubeadm's default, 24 hours.
pub const DEFAULT_JOIN_TOKEN_TTL: Duration = Duration::from_secs(24 * 60 * 60);

impl Default for Timings {
    /// Delays that feel like a (fast) cloud: an instance runs after 1.5 s.
    fn default() -> Self {
        Timings {
            provision: Duration::from_millis(500),
            boot: Duration::from_secs(1),
            load_balancer: Duration::from_millis(500),
            control_plane_create: Duration::from_secs(2),
            control_plane_update: Duration::from_secs(2),
            join_token_ttl: DEFAULT_JOIN_TOKEN_TTL,
        }
    }
}

impl Timings {
    /// Every delay `delay`: a few milliseconds make tests fast while every intermediate state
    /// still exists. The bootstrap token lifetime, not a delay, stays
    /// [`DEFAULT_JOIN_TOKEN_TTL`].
    pub fn uniform(delay: Duration) -> Self {
        Timings {
            provision: delay,
            boot: delay,
            load_balancer: delay,
            control_plane_create: delay,
            control_plane_update: delay,
            join_token_ttl: DEFAULT_JOIN_TOKEN_TTL,
        }
    }
}

/// Faults the sim injects into `/v1` requests other than `/v1/admin/*`.
///
/// # Guarantees
///
/// Each such request (after authentication) draws one number from a generator seeded with
/// `seed`, so the same sequence of requests meets the same faults. The draw picks at most one
/// of hang, throttle and error, with the given probabilities; `latency_ms` delays every request
/// that is not hung.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FaultConfig {
    /// Seed of the fault generator; setting the faults restarts the sequence.
    pub seed: u64,
    /// Added to every request before it is handled, in milliseconds.
    pub latency_ms: u64,
    /// Probability of a 500 `internal`.
    pub error_rate: f64,
    /// With `error_rate`: apply the request, then answer 500 anyway (a lost response), instead
    /// of failing before it is applied.
    pub error_after_apply: bool,
    /// Probability of a 429 `rate_limited` with a `Retry-After` header.
    pub throttle_rate: f64,
    /// The `Retry-After` of throttled requests, in seconds.
    pub retry_after_secs: u32,
    /// Probability that a request never answers (until the client gives up or the sim stops).
    pub hang_rate: f64,
    /// Not a request fault: the next this many instances booted for real never register their
    /// Node (their kubelet waits for `PUT /v1/admin/instances/{id}/faults` with
    /// `{"node": "registered"}`). Each such instance takes one when its agent starts, so the
    /// count goes down to 0; simulated instances (a cloud that boots nothing for real) and
    /// boots that fail before their agent starts take none.
    pub unregistered_nodes: u32,
}

impl FaultConfig {
    /// Checks that each rate is a probability and that they add up to at most 1.
    ///
    /// # Errors
    ///
    /// [`ConfigError::BadRate`] naming the first bad rate, or `rates` when the sum exceeds 1.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let rates = [
            ("error_rate", self.error_rate),
            ("throttle_rate", self.throttle_rate),
            ("hang_rate", self.hang_rate),
        ];
        for (field, rate) in rates {
            if !(0.0..=1.0).contains(&rate) {
                return Err(ConfigError::BadRate { field, rate });
            }
        }
        let sum = self.error_rate + self.throttle_rate + self.hang_rate;
        if sum > 1.0 {
            return Err(ConfigError::BadRate {
                field: "rates",
                rate: sum,
            });
        }
        Ok(())
    }
}

/// A configuration the sim cannot run with.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The token is empty: every request would be refused, or none.
    #[error("the API token is empty")]
    EmptyToken,
    /// No zone to place instances in.
    #[error("no zones configured")]
    NoZones,
    /// A zone name is empty or repeated.
    #[error("zone `{zone}` is empty or repeated")]
    BadZone {
        /// The zone.
        zone: String,
    },
    /// The domain is empty.
    #[error("the domain is empty")]
    EmptyDomain,
    /// A real boot names an empty binaries root or machines directory.
    #[error("real boot needs a Kubernetes binaries root and a machines directory")]
    EmptyRealBootPath,
    /// A fault rate is not a probability (or the rates add up to more than 1).
    #[error(
        "{field} is {rate}; want a probability in [0, 1] (error, throttle and hang rates add up to at most 1)"
    )]
    BadRate {
        /// `error_rate`, `throttle_rate`, `hang_rate`, or `rates` for their sum.
        field: &'static str,
        /// The bad value.
        rate: f64,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_valid() {
        assert!(SimCloudConfig::new("t").validate().is_ok());
    }

    #[test]
    fn bad_configs_are_refused() {
        assert!(matches!(
            SimCloudConfig::new("").validate(),
            Err(ConfigError::EmptyToken)
        ));
        let mut c = SimCloudConfig::new("t");
        c.zones = vec!["a".into(), "a".into()];
        assert!(matches!(c.validate(), Err(ConfigError::BadZone { .. })));
        let faults = FaultConfig {
            error_rate: 0.6,
            hang_rate: 0.6,
            ..FaultConfig::default()
        };
        assert!(matches!(
            faults.validate(),
            Err(ConfigError::BadRate { field: "rates", .. })
        ));
        let faults = FaultConfig {
            throttle_rate: f64::NAN,
            ..FaultConfig::default()
        };
        assert!(matches!(
            faults.validate(),
            Err(ConfigError::BadRate {
                field: "throttle_rate",
                ..
            })
        ));
    }
}
