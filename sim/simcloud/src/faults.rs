//! Deterministic fault decisions: which request hangs, is throttled or fails.
//!
//! Pure apart from its own generator: the HTTP middleware asks [`FaultInjector::decide`] once
//! per request and acts on the answer.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::config::FaultConfig;

/// What to do to one request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// Handle it normally.
    None,
    /// Never answer.
    Hang,
    /// Answer 429 with `Retry-After: retry_after_secs`.
    Throttle {
        /// Seconds the client should wait.
        retry_after_secs: u32,
    },
    /// Answer 500; after applying the request when `after_apply`.
    Error {
        /// Apply the request, then lose its response.
        after_apply: bool,
    },
}

/// The decision for one request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Decision {
    /// Wait this long first (not for hung requests).
    pub latency: Duration,
    /// Then this.
    pub fault: Fault,
}

/// How many requests met which fault since the faults were last set.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FaultStats {
    /// Requests decided on.
    pub requests: u64,
    /// Requests hung.
    pub hung: u64,
    /// Requests answered 429.
    pub throttled: u64,
    /// Requests answered 500.
    pub errored: u64,
}

/// Decides faults from a [`FaultConfig`] with a generator seeded by its `seed`.
#[derive(Clone, Debug)]
pub struct FaultInjector {
    config: FaultConfig,
    rng: SplitMix64,
    stats: FaultStats,
}

impl FaultInjector {
    /// An injector at the start of `config`'s sequence.
    pub fn new(config: FaultConfig) -> Self {
        FaultInjector {
            rng: SplitMix64(config.seed),
            config,
            stats: FaultStats::default(),
        }
    }

    /// The faults in force.
    pub fn config(&self) -> &FaultConfig {
        &self.config
    }

    /// Counts since the faults were last set.
    pub fn stats(&self) -> FaultStats {
        self.stats
    }

    /// Replaces the faults, restarting the sequence from the new seed and zeroing the counts.
    pub fn reconfigure(&mut self, config: FaultConfig) {
        *self = FaultInjector::new(config);
    }

    /// Whether the instance booting now is one whose Node must never register, taking one of
    /// [`FaultConfig::unregistered_nodes`] when it is.
    pub fn take_unregistered_node(&mut self) -> bool {
        let Some(left) = self.config.unregistered_nodes.checked_sub(1) else {
            return false;
        };
        self.config.unregistered_nodes = left;
        true
    }

    /// The decision for the next request. Draws exactly one number, whatever the rates.
    pub fn decide(&mut self) -> Decision {
        let draw = self.rng.next_unit();
        let c = &self.config;
        let fault = if draw < c.hang_rate {
            self.stats.hung += 1;
            Fault::Hang
        } else if draw < c.hang_rate + c.throttle_rate {
            self.stats.throttled += 1;
            Fault::Throttle {
                retry_after_secs: c.retry_after_secs,
            }
        } else if draw < c.hang_rate + c.throttle_rate + c.error_rate {
            self.stats.errored += 1;
            Fault::Error {
                after_apply: c.error_after_apply,
            }
        } else {
            Fault::None
        };
        self.stats.requests += 1;
        Decision {
            latency: Duration::from_millis(c.latency_ms),
            fault,
        }
    }
}

/// SplitMix64: tiny, fast, and the same sequence on every platform and crate version, which a
/// library generator does not promise. The state's tests draw their scripts from it too.
#[derive(Clone, Debug)]
pub(crate) struct SplitMix64(pub(crate) u64);

impl SplitMix64 {
    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1), 53 bits.
    fn next_unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn faults(n: usize, config: FaultConfig) -> Vec<Fault> {
        let mut injector = FaultInjector::new(config);
        (0..n).map(|_| injector.decide().fault).collect()
    }

    #[test]
    fn no_faults_by_default() {
        assert!(
            faults(1000, FaultConfig::default())
                .iter()
                .all(|f| *f == Fault::None)
        );
    }

    #[test]
    fn same_seed_same_sequence() {
        let config = FaultConfig {
            seed: 7,
            error_rate: 0.2,
            throttle_rate: 0.2,
            hang_rate: 0.1,
            ..FaultConfig::default()
        };
        assert_eq!(faults(500, config.clone()), faults(500, config.clone()));
        let other = FaultConfig { seed: 8, ..config };
        assert_ne!(
            faults(500, other.clone()),
            faults(500, FaultConfig { seed: 7, ..other })
        );
    }

    #[test]
    fn rates_are_roughly_honoured() {
        let mut injector = FaultInjector::new(FaultConfig {
            seed: 42,
            error_rate: 0.25,
            throttle_rate: 0.1,
            hang_rate: 0.05,
            retry_after_secs: 3,
            ..FaultConfig::default()
        });
        for _ in 0..10_000 {
            injector.decide();
        }
        let s = injector.stats();
        assert_eq!(s.requests, 10_000);
        assert!((2_300..=2_700).contains(&s.errored), "{s:?}");
        assert!((850..=1_150).contains(&s.throttled), "{s:?}");
        assert!((380..=620).contains(&s.hung), "{s:?}");
    }

    #[test]
    fn certain_faults_always_happen() {
        let all = faults(
            50,
            FaultConfig {
                throttle_rate: 1.0,
                retry_after_secs: 9,
                ..FaultConfig::default()
            },
        );
        assert!(all.iter().all(|f| *f
            == Fault::Throttle {
                retry_after_secs: 9
            }));
    }

    #[test]
    fn unregistered_nodes_are_taken_one_by_one_without_drawing() {
        let mut injector = FaultInjector::new(FaultConfig {
            unregistered_nodes: 2,
            ..FaultConfig::default()
        });
        assert!(injector.take_unregistered_node());
        assert_eq!(injector.config().unregistered_nodes, 1);
        assert!(injector.take_unregistered_node());
        assert!(!injector.take_unregistered_node());
        assert_eq!(injector.config().unregistered_nodes, 0);
        assert_eq!(injector.stats(), FaultStats::default());
    }

    #[test]
    fn reconfigure_restarts_the_sequence() {
        let config = FaultConfig {
            seed: 3,
            error_rate: 0.5,
            ..FaultConfig::default()
        };
        let mut injector = FaultInjector::new(config.clone());
        let first: Vec<_> = (0..20).map(|_| injector.decide().fault).collect();
        injector.reconfigure(config);
        assert_eq!(injector.stats(), FaultStats::default());
        let again: Vec<_> = (0..20).map(|_| injector.decide().fault).collect();
        assert_eq!(first, again);
    }
}
