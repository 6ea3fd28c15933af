//! A cluster's load balancer: one `capw-node lb` process on the balancer's loopback address,
//! reading its backends from a file the sim rewrites when the cluster's API servers change.

use std::fs;
use std::io;
use std::path::PathBuf;
use std::time::Duration;

use super::agent::AGENT;
use super::process::{self, ProcessError};
use super::{Machines, MachinesError};
use crate::state::LoadBalancerPlan;

/// The file beside the backends file that makes the balancer silent while it exists.
const SILENT_FILE: &str = "silent";

/// How long the balancer gets to stop after SIGTERM.
const STOP_GRACE: Duration = Duration::from_secs(5);

/// A load balancer could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum LoadBalancerError {
    /// Its directory or backends file could not be written.
    #[error("write {path}")]
    Write {
        /// The file or directory.
        path: PathBuf,
        /// The cause.
        #[source]
        source: io::Error,
    },
    /// No version of the cloud's binaries has the agent, which runs balancers too.
    #[error("no Kubernetes binaries with {AGENT} to run load balancers")]
    NoAgent,
    /// Its process could not be started.
    #[error("start load balancer")]
    Start(#[from] ProcessError),
}

impl Machines {
    /// Makes the balancer of `plan` run with exactly `plan.backends`: rewrites the backends
    /// file (atomically) when it differs, and starts the process when it is not running.
    /// Returns whether it started the process. Blocks briefly.
    ///
    /// # Errors
    ///
    /// [`LoadBalancerError`].
    pub fn ensure_load_balancer(&self, plan: &LoadBalancerPlan) -> Result<bool, LoadBalancerError> {
        let dir = self.dir.join(&plan.id);
        let logs = dir.join("logs");
        let write = |path: &PathBuf| {
            let path = path.clone();
            move |source| LoadBalancerError::Write { path, source }
        };
        fs::create_dir_all(&logs).map_err(write(&logs))?;
        let backends_file = dir.join("backends");
        let backends: String = plan.backends.iter().map(|b| format!("{b}\n")).collect();
        if fs::read_to_string(&backends_file).ok().as_deref() != Some(backends.as_str()) {
            process::write_atomically(&backends_file, backends.as_bytes())
                .map_err(write(&backends_file))?;
        }
        let pid_file = dir.join("lb.pid");
        if process::read_pid(&pid_file).is_some_and(|pid| process::alive(pid, &dir)) {
            return Ok(false);
        }
        let bin = self
            .binaries
            .newest_with(AGENT)
            .ok_or(LoadBalancerError::NoAgent)?;
        let listen = plan.listen.to_string();
        let backends_arg = backends_file.to_string_lossy().into_owned();
        process::spawn_detached(
            &bin.join(AGENT),
            &["lb", "--listen", &listen, "--backends", &backends_arg],
            &dir,
            &logs.join("lb.log"),
            &pid_file,
        )?;
        tracing::info!(load_balancer = %plan.id, %listen, "load balancer started");
        Ok(true)
    }

    /// Makes load balancer `id` silent (accepting connections and leaving them hanging, its
    /// forwarded connections cut) or forwarding again: the file `silent` beside its backends
    /// file, which `capw-node lb` looks for several times a second. Setting it before the
    /// balancer starts is fine: it finds the file when it does.
    ///
    /// # Errors
    ///
    /// The file cannot be written or removed.
    pub(crate) fn set_load_balancer_silent(&self, id: &str, silent: bool) -> io::Result<()> {
        // `id` is the cloud's own (`lb-<n>`), looked up in its state: never a path.
        super::set_flag_file(&self.dir.join(id), SILENT_FILE, silent)
    }

    /// Stops load balancer `id`'s process and removes its directory. Blocks.
    ///
    /// # Guarantees
    ///
    /// Idempotent; on success no process of it runs and its directory is gone.
    ///
    /// # Errors
    ///
    /// [`MachinesError::Remove`] when the directory cannot be removed.
    pub fn destroy_load_balancer(&self, id: &str) -> Result<(), MachinesError> {
        let dir = self.dir.join(id);
        process::stop_group(&dir.join("lb.pid"), &dir, STOP_GRACE);
        super::remove_machine_dir(&dir)
    }
}
