//! `capw delete`: mark an object deleted; a Cluster is torn down by the next `capw up`.

use anyhow::bail;
use capw_engine::store::{Deleted, ObjectKey, StoreError};

use crate::cli::{DeleteArgs, GlobalArgs, Resource};

pub fn run(global: &GlobalArgs, args: DeleteArgs) -> anyhow::Result<()> {
    let key = match args.resource {
        Resource::Clusters => ObjectKey::namespaced("Cluster", &args.namespace, &args.name),
        Resource::Clusterclasses => {
            ObjectKey::namespaced("ClusterClass", &args.namespace, &args.name)
        }
        Resource::Providers => ObjectKey::cluster_scoped("WasmProvider", &args.name),
        Resource::Machines => bail!("Machines belong to their Cluster: scale its topology instead"),
        Resource::Kubeconfig | Resource::ClusterSecrets => {
            bail!("a cluster's kubeconfig and secrets belong to it: delete the Cluster")
        }
    };
    let store = crate::state::open_store(global)?;
    match store.delete(&key) {
        Ok(Deleted::Removed) => println!("{key} deleted"),
        Ok(Deleted::Marked) => {
            println!("{key} marked for deletion; `capw up` tears it down")
        }
        Err(StoreError::NotFound(_)) => bail!("{key} not found"),
        Err(e) => return Err(e.into()),
    }
    Ok(())
}
