//! What the `capw` command line's test binaries share.

/// `capw` with state directory `state_dir`, the test build's plugin directory, the compiled
/// components' cache every test shares, and the logging a user gets by default.
pub fn capw_with_state(state_dir: &std::path::Path) -> std::process::Command {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_capw"));
    cmd.arg("--state-dir")
        .arg(state_dir)
        .arg("--plugin-dir")
        .arg(capw_test_support::plugin_dir())
        .arg("--cache-dir")
        .arg(std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("capw-compiled"))
        .env_remove("CAPW_LOG");
    cmd
}
