//! `oci` sources in the local mode: the component through capw-oci's [`Fetcher`] (content
//! cache first), registry credentials from the local secret named by
//! `credentialsSecretRef` (`<state-dir>/secrets/<name>/{.dockerconfigjson,token,username,password}`).

use capw_api::OciSource;
use capw_oci::{CREDENTIAL_KEYS, Credentials, FetchRequest, Fetched, Fetcher};

use crate::calls::chain;
use crate::secrets::LocalSecrets;

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
    secrets: &LocalSecrets,
) -> Result<Fetched, SourceFailure> {
    let credentials = credentials(source, secrets)?;
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

fn credentials(source: &OciSource, secrets: &LocalSecrets) -> Result<Credentials, SourceFailure> {
    let Some(secret) = &source.credentials_secret_ref else {
        return Ok(Credentials::Anonymous);
    };
    let failure = |message: String| SourceFailure {
        reason: "InvalidCredentials",
        message,
    };
    let keys = secrets
        .read_keys(&secret.name, &CREDENTIAL_KEYS)
        .map_err(|e| failure(format!("reading secret {:?}: {e}", secret.name)))?;
    let registry = capw_oci::registry_of(&source.reference).map_err(|e| failure(chain(&e)))?;
    Credentials::from_secret(&keys, &registry)
        .map_err(|e| failure(format!("secret {:?}: {}", secret.name, chain(&e))))
}
