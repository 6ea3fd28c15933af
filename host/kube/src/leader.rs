//! Leader election on a `coordination.k8s.io` Lease: one replica reconciles, the others wait.
//!
//! The holder renews the Lease every [`LeaseConfig::renew_every`]; a standby takes it once
//! `renewTime + leaseDurationSeconds` has passed without a renewal, so a killed leader is
//! replaced within the lease duration. A leader that stops gracefully releases the Lease, so
//! a standby takes over at its next try. Every write names the `resourceVersion` it read: two
//! replicas never both win.

use std::collections::BTreeMap;
use std::time::Duration;

use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
use kube::Client;
use kube::api::{Api, ObjectMeta, PostParams};

/// Where the Lease is and who this replica is.
#[derive(Clone, Debug)]
pub struct LeaseConfig {
    /// Name of the Lease.
    pub name: String,
    /// Its namespace.
    pub namespace: String,
    /// This replica's identity (the pod name), written as the holder.
    pub identity: String,
    /// How long a Lease holds without renewal.
    pub duration: Duration,
    /// How often the holder renews and a standby tries.
    pub renew_every: Duration,
}

/// A failed Lease operation.
#[derive(Debug, thiserror::Error)]
pub enum LeaseError {
    /// The API server refused or failed a Lease request.
    #[error("lease {namespace}/{name}")]
    Api {
        /// The Lease's namespace.
        namespace: String,
        /// Its name.
        name: String,
        #[source]
        source: kube::Error,
    },
    /// Another replica holds the Lease now.
    #[error("lease {namespace}/{name} was taken by {holder:?}")]
    Lost {
        /// The Lease's namespace.
        namespace: String,
        /// Its name.
        name: String,
        /// The new holder.
        holder: Option<String>,
    },
}

/// This replica's handle on the Lease.
#[derive(Clone)]
pub struct LeaderLease {
    api: Api<Lease>,
    config: LeaseConfig,
    labels: BTreeMap<String, String>,
}

fn now() -> MicroTime {
    MicroTime(jiff::Timestamp::now())
}

impl LeaderLease {
    /// A handle on the Lease of `config`.
    pub fn new(client: Client, config: LeaseConfig) -> Self {
        LeaderLease {
            api: Api::namespaced(client, &config.namespace),
            config,
            labels: BTreeMap::new(),
        }
    }

    /// The same handle, creating the Lease with `labels` (so that a group of Leases can be
    /// listed at once, as the shards do).
    #[must_use]
    pub fn with_labels(mut self, labels: BTreeMap<String, String>) -> Self {
        self.labels = labels;
        self
    }

    /// What this handle was made with.
    pub fn config(&self) -> &LeaseConfig {
        &self.config
    }

    fn api_error(&self, source: kube::Error) -> LeaseError {
        LeaseError::Api {
            namespace: self.config.namespace.clone(),
            name: self.config.name.clone(),
            source,
        }
    }

    /// Waits until this replica holds the Lease.
    ///
    /// # Errors
    ///
    /// [`LeaseError::Api`] when the API server refuses (a network failure is retried).
    pub async fn acquire(&self) -> Result<(), LeaseError> {
        loop {
            match self.try_acquire().await {
                Ok(true) => return Ok(()),
                Ok(false) => {}
                Err(LeaseError::Api {
                    source: kube::Error::Api(s),
                    ..
                }) if s.code == 403 || s.code == 401 => {
                    return Err(self.api_error(kube::Error::Api(s)));
                }
                Err(e) => tracing::debug!(error = %e, "lease not taken"),
            }
            tokio::time::sleep(self.config.renew_every).await;
        }
    }

    /// One attempt to take or renew the Lease; `true` when this replica holds it now.
    ///
    /// # Errors
    ///
    /// [`LeaseError::Api`] when the API server fails or refuses (a lost race is `Ok(false)`).
    pub async fn try_acquire(&self) -> Result<bool, LeaseError> {
        let current = self
            .api
            .get_opt(&self.config.name)
            .await
            .map_err(|e| self.api_error(e))?;
        self.try_acquire_from(current).await
    }

    /// [`Self::try_acquire`] from the Lease as last read (`None`: it did not exist), without
    /// reading it again: the write names the `resourceVersion` of `current`, so a Lease that
    /// changed since it was read is `Ok(false)`, never overwritten.
    ///
    /// # Errors
    ///
    /// [`LeaseError::Api`] when the API server fails or refuses (a lost race is `Ok(false)`).
    pub async fn try_acquire_from(&self, current: Option<Lease>) -> Result<bool, LeaseError> {
        let me = &self.config.identity;
        let duration = i32::try_from(self.config.duration.as_secs()).unwrap_or(i32::MAX);
        let Some(mut lease) = current else {
            let lease = Lease {
                metadata: ObjectMeta {
                    name: Some(self.config.name.clone()),
                    namespace: Some(self.config.namespace.clone()),
                    labels: (!self.labels.is_empty()).then(|| self.labels.clone()),
                    ..ObjectMeta::default()
                },
                spec: Some(LeaseSpec {
                    holder_identity: Some(me.clone()),
                    lease_duration_seconds: Some(duration),
                    acquire_time: Some(now()),
                    renew_time: Some(now()),
                    lease_transitions: Some(0),
                    ..LeaseSpec::default()
                }),
            };
            return match self.api.create(&PostParams::default(), &lease).await {
                Ok(_) => Ok(true),
                Err(kube::Error::Api(s)) if s.code == 409 => Ok(false),
                Err(e) => Err(self.api_error(e)),
            };
        };
        let spec = lease.spec.get_or_insert_with(LeaseSpec::default);
        let holder = spec.holder_identity.clone().filter(|h| !h.is_empty());
        let mine = holder.as_deref() == Some(me.as_str());
        if !mine && holder.is_some() && !expired(spec) {
            return Ok(false);
        }
        if !mine {
            spec.acquire_time = Some(now());
            spec.lease_transitions = Some(spec.lease_transitions.unwrap_or(0) + 1);
            spec.holder_identity = Some(me.clone());
        }
        spec.renew_time = Some(now());
        spec.lease_duration_seconds = Some(duration);
        match self
            .api
            .replace(&self.config.name, &PostParams::default(), &lease)
            .await
        {
            Ok(_) => Ok(true),
            Err(kube::Error::Api(s)) if s.code == 409 => Ok(false),
            Err(e) => Err(self.api_error(e)),
        }
    }

    /// Renews the Lease until it is lost or cannot be renewed within its duration; returns
    /// why. Never returns while this replica leads.
    pub async fn hold(&self) -> LeaseError {
        let mut last_renewal = tokio::time::Instant::now();
        loop {
            tokio::time::sleep(self.config.renew_every).await;
            match self.try_acquire().await {
                Ok(true) => last_renewal = tokio::time::Instant::now(),
                Ok(false) => {
                    let holder = self
                        .api
                        .get_opt(&self.config.name)
                        .await
                        .ok()
                        .flatten()
                        .and_then(|l| l.spec)
                        .and_then(|s| s.holder_identity);
                    if holder.as_deref() != Some(self.config.identity.as_str()) {
                        return LeaseError::Lost {
                            namespace: self.config.namespace.clone(),
                            name: self.config.name.clone(),
                            holder,
                        };
                    }
                }
                Err(e) => {
                    tracing::warn!(error = %e, "renewing the lease");
                    // Another replica may take it once the duration passed: stop leading
                    // before that can happen.
                    if last_renewal.elapsed() + self.config.renew_every >= self.config.duration {
                        return e;
                    }
                }
            }
        }
    }

    /// Gives the Lease up, so a standby takes over at once. Does nothing when another replica
    /// holds it.
    ///
    /// # Errors
    ///
    /// [`LeaseError::Api`] when the API server fails.
    pub async fn release(&self) -> Result<(), LeaseError> {
        let Some(mut lease) = self
            .api
            .get_opt(&self.config.name)
            .await
            .map_err(|e| self.api_error(e))?
        else {
            return Ok(());
        };
        let Some(spec) = lease.spec.as_mut() else {
            return Ok(());
        };
        if spec.holder_identity.as_deref() != Some(self.config.identity.as_str()) {
            return Ok(());
        }
        spec.holder_identity = None;
        spec.renew_time = None;
        spec.acquire_time = None;
        match self
            .api
            .replace(&self.config.name, &PostParams::default(), &lease)
            .await
        {
            Ok(_) => Ok(()),
            Err(e) => Err(self.api_error(e)),
        }
    }
}

/// Whether nobody renewed the Lease within its duration.
pub(crate) fn expired(spec: &LeaseSpec) -> bool {
    let (Some(renewed), Some(secs)) = (&spec.renew_time, spec.lease_duration_seconds) else {
        return true;
    };
    let deadline = renewed.0 + jiff::SignedDuration::from_secs(i64::from(secs));
    jiff::Timestamp::now() > deadline
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lease_expires_after_its_duration_without_renewal() {
        let fresh = LeaseSpec {
            renew_time: Some(now()),
            lease_duration_seconds: Some(15),
            ..LeaseSpec::default()
        };
        assert!(!expired(&fresh));
        let stale = LeaseSpec {
            renew_time: Some(MicroTime(
                jiff::Timestamp::now() - jiff::SignedDuration::from_secs(16),
            )),
            lease_duration_seconds: Some(15),
            ..LeaseSpec::default()
        };
        assert!(expired(&stale));
        assert!(expired(&LeaseSpec::default()));
    }
}
