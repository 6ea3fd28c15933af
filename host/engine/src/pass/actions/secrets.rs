//! `EnsureSecrets`: the bootstrap provider's cluster secrets (CAs, keys), stored once they
//! are ready as the `<cluster>-cluster-secrets` Secret.

use capw_runtime::bootstrap::SecretsState;

use crate::objects::secret_object;
use crate::pass::env::{Env, bootstrap_call};
use crate::pass::note::ActionNote;
use crate::pass::snapshot::Snapshot;

/// `EnsureSecrets`: store the bootstrap provider's cluster secrets once they are ready.
pub(crate) async fn ensure_secrets(env: &Env, s: &Snapshot) -> ActionNote {
    const COND: &str = "ControlPlaneInitialized";
    let (provider, ctx) = match bootstrap_call(env, s, COND, "secrets") {
        Ok(call) => call,
        Err(note) => return note,
    };
    match provider.provider.cluster_secrets(&ctx).await {
        Ok(SecretsState::Ready(items)) => {
            let items = items.into_iter().map(|i| (i.name, i.data)).collect();
            let object = secret_object(&s.namespace, &s.name, &s.uid, &items);
            match env.store.apply(object).await {
                Ok(_) => ActionNote::done(),
                Err(e) => Env::store_failed(COND, &e),
            }
        }
        Ok(SecretsState::InProgress(p)) => ActionNote::in_progress(COND, &p),
        Err(e) => ActionNote::failed(COND, &e),
    }
}
