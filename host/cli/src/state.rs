//! The local mode's state directory and store, as the commands open them.

use std::path::Path;

use anyhow::Context;
use capw_local::LocalConfig;
use capw_store::Store;

use crate::cli::GlobalArgs;

/// The local-mode settings the global flags say.
pub fn config(global: &GlobalArgs) -> LocalConfig {
    config_in(global, &global.state_dir)
}

/// The local-mode settings the global flags say, with the state in `state_dir`.
pub fn config_in(global: &GlobalArgs, state_dir: &Path) -> LocalConfig {
    let mut config = LocalConfig::new(state_dir);
    if let Some(dir) = &global.plugin_dir {
        config.engine.plugin_dir = dir.clone();
    }
    config.engine.cache_dir = global.cache_dir();
    config
}

/// Opens (creating when missing) the state directory's store.
pub fn open_store(global: &GlobalArgs) -> anyhow::Result<Store> {
    let config = config(global);
    std::fs::create_dir_all(&config.state_dir)
        .with_context(|| format!("creating {}", config.state_dir.display()))?;
    Store::open(&config.state_file())
        .with_context(|| format!("opening {}", config.state_file().display()))
}
