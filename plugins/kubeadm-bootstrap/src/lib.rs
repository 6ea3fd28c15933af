//! A kubeadm-style bootstrap provider for capw: the cluster's CAs and service-account keys,
//! cloud-init that runs `kubeadm init` or `kubeadm join` with `kubeadm.k8s.io/v1beta4`
//! configuration, and an admin kubeconfig.
//!
//! The provider implements the `bootstrap` extension point only:
//! - `cluster-secrets` creates real X.509 CAs (cluster, etcd, front-proxy), the
//!   service-account key pair, a bootstrap token and the CA cert hash ([`secrets`] names the
//!   items);
//! - `generate` turns them, the endpoint, the version and the control-plane members into
//!   cloud-config for the roles `init`, `join-control-plane` and `worker` ([`cloud_init`]);
//!   for a worker of a cluster whose control plane a service runs (the request's `join`,
//!   contract 0.3), a join with the service's token, pinned to the service's CA
//!   ([`cloud_init::service_join`]);
//! - `kubeconfig` issues an admin client certificate ([`kubeconfig`]);
//! - `current-join-token` and `renew-join-token` (contract 0.3) name the bootstrap token joins
//!   carry and mint a fresh one, which the host writes into the workload cluster once the
//!   first is gone or past half its life ([`token`]).
//!
//! Where to look: [`config`] for the config and its rules, [`pki`] for keys and certificates
//! (pure Rust, so they build for wasm32-wasip2), [`kubeadm`] for the kubeadm documents.
//!
//! No error message carries secret material: errors name the item, never its content.

#![warn(missing_docs)]

pub mod cloud_init;
pub mod config;
pub mod endpoint;
pub mod kubeadm;
pub mod kubeconfig;
pub mod pki;
pub mod secrets;
pub mod token;

use std::time::SystemTime;

use capw_sdk::bootstrap::{
    BootstrapData, BootstrapFormat, BootstrapRequest, JoinToken, SecretItem, SecretsState,
};
use capw_sdk::metadata::FieldError;
use capw_sdk::types::{Endpoint, ErrorCode, ProviderError};
use capw_sdk::{Bootstrap, Context, Provider, Validate};

pub use config::{KeyAlgorithm, KubeadmBootstrapConfig};

use crate::cloud_init::GenerateError;
use crate::kubeconfig::KubeconfigError;
use crate::pki::{ClusterPki, PkiError};
use crate::secrets::{SecretSet, SecretsError};
use crate::token::BootstrapToken;

/// The kubeadm bootstrap provider. Stateless: everything it knows comes with the call.
pub struct KubeadmBootstrap;

impl Provider for KubeadmBootstrap {
    type Config = KubeadmBootstrapConfig;
    const NAME: &'static str = "kubeadm-bootstrap";
    const DESCRIPTION: &'static str = "kubeadm-style bootstrap: cluster CAs and service-account \
         keys, cloud-init running kubeadm init/join with v1beta4 configuration, admin kubeconfigs.";
}

impl Validate for KubeadmBootstrapConfig {
    /// The rules of [`KubeadmBootstrapConfig::validate`].
    fn validate(&self) -> Result<(), Vec<FieldError>> {
        KubeadmBootstrapConfig::validate(self)
    }
}

impl Bootstrap for KubeadmBootstrap {
    /// Always `ready` in one call: with RSA-2048 the four keys take a few seconds in the
    /// component (see the README), well inside the call deadline; the host runs calls for
    /// other clusters meanwhile. Items: see [`secrets`].
    fn cluster_secrets(
        ctx: &Context<KubeadmBootstrapConfig>,
    ) -> Result<SecretsState, ProviderError> {
        let pki = ClusterPki::generate(ctx.config.key_algorithm, SystemTime::now())
            .map_err(pki_failure)?;
        let token = BootstrapToken::generate().map_err(|e| pki_failure(PkiError::Random(e)))?;
        let items = secrets::to_items(&pki, &token).map_err(secrets_failure)?;
        Ok(SecretsState::Ready(items))
    }

    /// [`cloud_init::generate`]; refusals are permanent `invalid-input` errors.
    fn generate(
        ctx: &Context<KubeadmBootstrapConfig>,
        request: BootstrapRequest,
    ) -> Result<BootstrapData, ProviderError> {
        let data = cloud_init::generate(&ctx.config, &ctx.cluster().name, &request)
            .map_err(generate_failure)?;
        Ok(BootstrapData {
            format: BootstrapFormat::CloudConfig,
            data: data.into_bytes(),
        })
    }

    /// [`kubeconfig::admin_kubeconfig`] with a client key of the configured algorithm.
    fn kubeconfig(
        ctx: &Context<KubeadmBootstrapConfig>,
        endpoint: Endpoint,
        secrets: Vec<SecretItem>,
    ) -> Result<String, ProviderError> {
        kubeconfig::admin_kubeconfig(
            &ctx.cluster().name,
            &endpoint,
            SecretSet::new(&secrets),
            ctx.config.key_algorithm,
            SystemTime::now(),
        )
        .map_err(kubeconfig_failure)
    }
    /// The token in item [`secrets::BOOTSTRAP_TOKEN`], with the lifetime and groups a token
    /// made by `kubeadm init` has.
    fn current_join_token(
        ctx: &Context<KubeadmBootstrapConfig>,
        secrets: Vec<SecretItem>,
    ) -> Result<Option<JoinToken>, ProviderError> {
        let token = SecretSet::new(&secrets).token().map_err(secrets_failure)?;
        Ok(Some(join_token(&ctx.config, &token)))
    }

    /// A fresh token in the same item, with the same lifetime and groups.
    fn renew_join_token(
        ctx: &Context<KubeadmBootstrapConfig>,
        _secrets: Vec<SecretItem>,
    ) -> Result<JoinToken, ProviderError> {
        let token = BootstrapToken::generate().map_err(|e| pki_failure(PkiError::Random(e)))?;
        Ok(join_token(&ctx.config, &token))
    }
}

capw_sdk::export_provider!(
    KubeadmBootstrap,
    unsupported: [Infrastructure, ControlPlane, LifecycleHooks]
);

// An error and its sources on one line. Safe to show: no error of this crate carries secret
// material, and the crates' own errors (der, rsa, x509-cert) describe structure only.
use capw_text::error_chain as chain;

/// `token` as the contract's join token, as `kubeadm init` creates it.
fn join_token(config: &KubeadmBootstrapConfig, token: &BootstrapToken) -> JoinToken {
    JoinToken {
        item: secrets::BOOTSTRAP_TOKEN.into(),
        id: token.id().into(),
        secret: token.secret().into(),
        ttl_seconds: u64::from(config.bootstrap_token_ttl_hours) * 3600,
        extra_groups: kubeadm::TOKEN_GROUPS.iter().map(|g| (*g).into()).collect(),
    }
}

/// Creating material failed: fresh randomness may succeed, so the host may retry.
fn pki_failure(err: PkiError) -> ProviderError {
    ProviderError::retryable(ErrorCode::Internal, chain(&err))
}

fn secrets_failure(err: SecretsError) -> ProviderError {
    match err {
        SecretsError::Pki(pki) => pki_failure(pki),
        other => ProviderError::permanent(ErrorCode::InvalidInput, chain(&other)),
    }
}

fn generate_failure(err: GenerateError) -> ProviderError {
    match err {
        GenerateError::Secrets(secrets) => secrets_failure(secrets),
        GenerateError::Render(_) => ProviderError::permanent(ErrorCode::Internal, chain(&err)),
        other => ProviderError::permanent(ErrorCode::InvalidInput, chain(&other)),
    }
}

fn kubeconfig_failure(err: KubeconfigError) -> ProviderError {
    match err {
        KubeconfigError::Secrets(secrets) => secrets_failure(secrets),
        KubeconfigError::Endpoint(_) => {
            ProviderError::permanent(ErrorCode::InvalidInput, chain(&err))
        }
        KubeconfigError::Issue(_) => ProviderError::retryable(ErrorCode::Internal, chain(&err)),
        KubeconfigError::Render(_) => ProviderError::permanent(ErrorCode::Internal, chain(&err)),
    }
}

#[cfg(test)]
mod testing;
#[cfg(test)]
mod tests;
