//! An instance's machine: launched from its bootstrap data, watched through the status its
//! agent writes, destroyed with everything it runs.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::images::{ImageError, machine_version};
use super::kubeadm::{self, KubeadmError};
use super::process::{self, ProcessError};
use super::redact::redact;
use super::rootfs::{self, RootfsError};
use super::{Machines, MachinesError};
use crate::boot_check::{self, BootCheckError};
use crate::state::LaunchOrder;

/// The agent binary, in each version's `bin/`.
pub const AGENT: &str = "capw-node";

/// How long the agent gets to stop its components after SIGTERM.
const STOP_GRACE: Duration = Duration::from_secs(10);

/// How long `capw-node reset` (leaving etcd) may take.
const RESET_LIMIT: Duration = Duration::from_secs(30);

/// Lines of the agent's log quoted when it exits unasked.
const TAIL_LINES: usize = 5;

/// Why a machine did not start. Its text, sources included, becomes the instance's reason.
#[derive(Debug, thiserror::Error)]
pub enum LaunchError {
    /// The bootstrap data is not cloud-config running kubeadm with a config file.
    #[error("bootstrap")]
    Data(#[source] BootCheckError),
    /// The machine's directory could not be made.
    #[error("create machine directory {path}")]
    Prepare {
        /// The directory.
        path: PathBuf,
        /// The cause.
        #[source]
        source: io::Error,
    },
    /// The cloud-config's files could not be written.
    #[error(transparent)]
    Rootfs(#[from] RootfsError),
    /// The cloud has no image for the version.
    #[error(transparent)]
    Image(#[from] ImageError),
    /// kubeadm refused the kubeadm documents.
    #[error(transparent)]
    Kubeadm(#[from] KubeadmError),
    /// The sim's own check failed (endpoint, token or CA hash registered with the cluster):
    /// its reason, as the state gave it.
    #[error("{0}")]
    Check(String),
    /// The agent could not be started.
    #[error("start the machine's agent")]
    Agent(#[from] ProcessError),
}

/// What a machine's files say about it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Observation {
    /// No agent was ever started.
    NotStarted,
    /// The agent runs and has not said how the boot ended.
    Booting,
    /// The agent runs and says the machine is ready.
    Ready,
    /// The agent says the boot failed, with this reason.
    Failed(String),
    /// The agent is gone without a verdict: why, from its log.
    Exited(String),
}

/// The files of an instance's machine directory.
pub(super) struct MachineDir<'a>(pub(super) &'a Path);

impl MachineDir<'_> {
    pub(super) fn rootfs(&self) -> PathBuf {
        self.0.join("rootfs")
    }
    pub(super) fn logs(&self) -> PathBuf {
        self.0.join("logs")
    }
    pub(super) fn pid_file(&self) -> PathBuf {
        self.0.join("agent.pid")
    }
    fn status(&self) -> PathBuf {
        self.0.join("status")
    }
    fn agent_log(&self) -> PathBuf {
        self.logs().join("agent.log")
    }
}

impl Machines {
    /// Launches the machine of `order`: writes its files, finds its image, has kubeadm judge
    /// its documents, applies the sim's own verdict, and starts its agent. Blocks for as long
    /// as kubeadm takes. `node_unregistered` is asked once, just before the agent starts,
    /// whether this machine's Node must not register (the cloud's `unregistered_nodes`
    /// fault); if so the fault file is written first.
    ///
    /// # Guarantees
    ///
    /// Idempotent: when an agent was started already (its pid file exists), nothing is done
    /// and `node_unregistered` is not asked.
    ///
    /// # Errors
    ///
    /// [`LaunchError`], whose text is the boot's failure reason.
    pub fn launch(
        &self,
        order: &LaunchOrder,
        node_unregistered: impl FnOnce() -> bool,
    ) -> Result<(), LaunchError> {
        let dir = self.dir.join(&order.id);
        let files = MachineDir(&dir);
        if files.pid_file().exists() {
            return Ok(());
        }
        let data = boot_check::machine_data(&order.data).map_err(LaunchError::Data)?;
        for path in [files.logs(), files.rootfs()] {
            fs::create_dir_all(&path).map_err(|source| LaunchError::Prepare { path, source })?;
        }
        rootfs::write_rootfs(&files.rootfs(), &data.files)?;
        let version = machine_version(&files.rootfs())?;
        let bin = self.binaries.bin_dir(&version)?;
        let config = files
            .rootfs()
            .join(data.kubeadm_config.trim_start_matches('/'));
        kubeadm::validate(&bin, &config, &data.secrets)?;
        let (role, _) = order
            .verdict
            .as_ref()
            .map_err(|r| LaunchError::Check(r.clone()))?;
        let address = order.address.to_string();
        let args = [
            "boot",
            "--root",
            path_str(&dir),
            "--bin-dir",
            path_str(&bin),
            "--address",
            &address,
            "--role",
            role.as_str(),
            "--name",
            &order.name,
            "--provider-id",
            &order.provider_id,
        ];
        if node_unregistered() {
            let faults = dir.join("faults");
            super::set_flag_file(&faults, super::fault::NODE_UNREGISTERED, true).map_err(
                |source| LaunchError::Prepare {
                    path: faults.join(super::fault::NODE_UNREGISTERED),
                    source,
                },
            )?;
            tracing::info!(instance = %order.id, "its Node will not register: the cloud's unregistered_nodes fault");
        }
        process::spawn_detached(
            &bin.join(AGENT),
            &args,
            &dir,
            &files.agent_log(),
            &files.pid_file(),
        )?;
        tracing::info!(instance = %order.id, %version, role = role.as_str(), %address, "machine agent started");
        Ok(())
    }

    /// What instance `id`'s machine files say.
    pub fn observe(&self, id: &str) -> Observation {
        let dir = self.dir.join(id);
        let files = MachineDir(&dir);
        let Some(pid) = process::read_pid(&files.pid_file()) else {
            return Observation::NotStarted;
        };
        // Liveness first: an agent that writes its verdict and exits is seen with it.
        let alive = process::alive(pid, &dir);
        let status = fs::read_to_string(files.status()).unwrap_or_default();
        let status = status.trim();
        if let Some(reason) = status.strip_prefix("failed:") {
            return Observation::Failed(redact(reason.trim(), &[]));
        }
        if alive {
            return if status == "ready" {
                Observation::Ready
            } else {
                Observation::Booting
            };
        }
        let tail = redact(&process::tail(&files.agent_log(), TAIL_LINES), &[]);
        Observation::Exited(format!(
            "the machine's agent exited: {}",
            if tail.is_empty() {
                "it logged nothing"
            } else {
                tail.trim()
            }
        ))
    }

    /// Destroys instance `id`'s machine: `capw-node reset` (bounded) when an agent was
    /// started, SIGTERM to the agent's group and SIGKILL after a grace period, SIGKILL to
    /// any process still naming the directory, then removes the directory. Blocks.
    ///
    /// # Guarantees
    ///
    /// Idempotent; on success no process of the machine runs and its directory is gone.
    ///
    /// # Errors
    ///
    /// [`MachinesError::Remove`] when the directory cannot be removed.
    pub fn destroy_instance(&self, id: &str) -> Result<(), MachinesError> {
        let dir = self.dir.join(id);
        let files = MachineDir(&dir);
        if files.pid_file().exists()
            && let Ok(version) = machine_version(&files.rootfs())
            && let Ok(bin) = self.binaries.bin_dir(&version)
            && bin.join(AGENT).is_file()
        {
            let args = [
                "reset",
                "--root",
                path_str(&dir),
                "--bin-dir",
                path_str(&bin),
            ];
            let done = process::run_bounded(
                &bin.join(AGENT),
                &args,
                &files.logs().join("reset.log"),
                RESET_LIMIT,
            );
            if done != Some(true) {
                // The directory goes next: quote the log's end now.
                tracing::warn!(
                    instance = id,
                    log = %process::tail(&files.logs().join("reset.log"), TAIL_LINES),
                    "capw-node reset failed or timed out",
                );
            }
        }
        process::stop_group(&files.pid_file(), &dir, STOP_GRACE);
        super::remove_machine_dir(&dir)
    }
}

/// A path as an argument; machine paths are UTF-8 (the machines directory is checked when
/// the sim starts).
fn path_str(path: &Path) -> &str {
    path.to_str().unwrap_or_default()
}
