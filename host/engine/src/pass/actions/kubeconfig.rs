//! `EnsureKubeconfig`: the bootstrap provider's admin kubeconfig for the cluster's endpoint,
//! stored as the `<cluster>-kubeconfig` Secret.

use crate::objects::kubeconfig::kubeconfig_object;
use crate::pass::env::{Env, bootstrap_call};
use crate::pass::note::ActionNote;
use crate::pass::snapshot::Snapshot;

/// `EnsureKubeconfig`: ask the bootstrap provider for an admin kubeconfig for the current
/// endpoint and store it.
pub(crate) async fn ensure_kubeconfig(env: &Env, s: &Snapshot) -> ActionNote {
    const COND: &str = capw_reconcile::CONTROL_PLANE_AVAILABLE;
    let (Some(endpoint_text), Some(items)) = (s.endpoint_text(), s.contract_secrets()) else {
        return ActionNote::done();
    };
    let (provider, ctx) = match bootstrap_call(env, s, COND, "kubeconfig") {
        Ok(call) => call,
        Err(note) => return note,
    };
    match provider
        .provider
        .kubeconfig(&ctx, &s.endpoint(), &items)
        .await
    {
        Ok(kubeconfig) => {
            let object = kubeconfig_object(
                &s.namespace,
                &s.name,
                &s.uid,
                &endpoint_text,
                kubeconfig.as_bytes(),
            );
            match env.store.apply(object).await {
                Ok(_) => {
                    tracing::info!(cluster = %s.name, endpoint = %endpoint_text, "kubeconfig stored");
                    ActionNote::done()
                }
                Err(e) => Env::store_failed(COND, &e),
            }
        }
        Err(e) => ActionNote::failed(COND, &e),
    }
}
