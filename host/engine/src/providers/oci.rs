//! `oci` sources: the component through capw-oci's [`Fetcher`] (content cache first),
//! registry credentials from the secret `credentialsSecretRef` names (its keys
//! `.dockerconfigjson`, `token`, or `username` and `password`): in the local mode the files
//! `<state-dir>/secrets/<name>/<key>`, in the Kubernetes mode the Secret's `data`.

use capw_api::OciSource;
use capw_oci::{CREDENTIAL_KEYS, Credentials, FetchRequest, Fetched, Fetcher};

use capw_text::error_chain as chain;

use super::sources::SecretsIn;

/// Why an `oci` source gave no component: a condition's reason and message.
#[derive(Debug)]
pub(crate) struct SourceFailure {
    pub reason: &'static str,
    pub message: String,
}

/// The component `source` names.
pub(crate) async fn fetch_oci(
    fetcher: &Fetcher,
    source: &OciSource,
    secrets: &SecretsIn<'_>,
) -> Result<Fetched, SourceFailure> {
    let credentials = credentials(source, secrets).await?;
    let request = FetchRequest {
        reference: source.reference.clone(),
        digest: source.digest.clone(),
        pull_policy: source.pull_policy,
        insecure: source.insecure.unwrap_or(false),
        credentials,
    };
    fetcher
        .fetch(&request, None)
        .await
        .map_err(|e| SourceFailure {
            reason: e.reason(),
            message: chain(&e),
        })
}

async fn credentials(
    source: &OciSource,
    secrets: &SecretsIn<'_>,
) -> Result<Credentials, SourceFailure> {
    let Some(secret) = &source.credentials_secret_ref else {
        return Ok(Credentials::Anonymous);
    };
    let failure = |message: String| SourceFailure {
        reason: "InvalidCredentials",
        message,
    };
    let keys = secrets
        .keys("credentialsSecretRef", secret, &CREDENTIAL_KEYS)
        .await
        .map_err(failure)?;
    let registry = capw_oci::registry_of(&source.reference).map_err(|e| failure(chain(&e)))?;
    Credentials::from_secret(&keys, &registry)
        .map_err(|e| failure(format!("secret {:?}: {}", secret.name, chain(&e))))
}
