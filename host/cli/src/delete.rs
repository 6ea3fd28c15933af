//! `capw delete`: mark an object deleted; a Cluster is torn down by the next `capw up`.

use anyhow::bail;
use capw_api::{Cluster, ClusterClass, WasmProvider};
use capw_engine::store::{Deleted, StoreError, cluster_key_of, key_of};

use crate::cli::{DeleteArgs, GlobalArgs, Resource};

pub fn run(global: &GlobalArgs, args: DeleteArgs) -> anyhow::Result<()> {
    let key = match args.resource {
        Resource::Clusters => key_of::<Cluster>(&args.namespace, &args.name),
        Resource::Clusterclasses => key_of::<ClusterClass>(&args.namespace, &args.name),
        Resource::Providers => cluster_key_of::<WasmProvider>(&args.name),
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
