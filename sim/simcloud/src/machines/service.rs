//! A managed control plane's service: one `capw-node managed` agent on the service's loopback
//! address, running etcd, kube-apiserver, kube-controller-manager and kube-scheduler of the
//! version the state asks for, with the service's own CA. No Node, no kubelet.
//!
//! The sim and the agent talk through files in `DIR/mcp-<n>/` (the agent's side is in
//! `tests/kube-env/node/managed.go`):
//!
//! | File | Written by | Holds |
//! |---|---|---|
//! | `rootfs/etc/kubernetes/pki/ca.crt`, `ca.key` | the sim, at launch | the service's CA (the key 0600) |
//! | `wanted` | the sim, whenever it differs | `<version> <bin-dir>`: what to serve; a new line is an in-place upgrade |
//! | `tokens` | the sim, whenever it differs | `<token> <expires-unix>`, 0600: the bootstrap token whose Secret the cluster must hold |
//! | `status` | the agent | `booting`, `ready`, `updating` or `failed: reason` |
//! | `served-version` | the agent | the version its API server answers `/version` with, once `/readyz` is ok |
//! | `agent.pid`, `logs/` | the sim, the agent | the agent's pid (its process group), every process's log |

use std::fs;
use std::io;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::agent::AGENT;
use super::images::ImageError;
use super::process::{self, ProcessError};
use super::redact::redact;
use super::{Machines, MachinesError};
use crate::state::{ServiceLaunchOrder, ServicePlan};

/// How long the agent gets to stop its components after SIGTERM (each gets 10 s).
const STOP_GRACE: Duration = Duration::from_secs(45);

/// Lines of the agent's log quoted when it exits unasked.
const TAIL_LINES: usize = 5;

/// A service could not be started or kept in step.
#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    /// A file of the service could not be written.
    #[error("write {path}")]
    Write {
        /// The file or directory.
        path: PathBuf,
        /// The cause.
        #[source]
        source: io::Error,
    },
    /// The cloud has no binaries for the version.
    #[error(transparent)]
    Image(#[from] ImageError),
    /// The agent could not be started.
    #[error("start the service's agent")]
    Agent(#[from] ProcessError),
}

/// What a service's files say about it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ServiceObservation {
    /// No agent was ever started, or its agent is gone without a verdict (a crash, a reboot of
    /// the host): to launch (again, on the same data).
    NotRunning(Option<String>),
    /// The agent runs and its API server is not (yet, or no longer) serving.
    Starting,
    /// The agent runs and its API server serves this version.
    Serving(String),
    /// The agent says it failed, with this reason.
    Failed(String),
}

/// The files of a service's directory.
struct ServiceDir(PathBuf);

impl ServiceDir {
    fn pki(&self) -> PathBuf {
        self.0.join("rootfs/etc/kubernetes/pki")
    }
    fn logs(&self) -> PathBuf {
        self.0.join("logs")
    }
    fn pid_file(&self) -> PathBuf {
        self.0.join("agent.pid")
    }
    fn status(&self) -> PathBuf {
        self.0.join("status")
    }
    fn served_version(&self) -> PathBuf {
        self.0.join("served-version")
    }
    fn wanted(&self) -> PathBuf {
        self.0.join("wanted")
    }
    fn tokens(&self) -> PathBuf {
        self.0.join("tokens")
    }
}

/// `vX.Y.Z` from `X.Y.Z` or `vX.Y.Z`.
fn with_v(version: &str) -> String {
    format!("v{}", version.trim_start_matches('v'))
}

impl Machines {
    /// Starts the agent of the service `order` describes, unless one runs: writes the CA
    /// (unless there is one), the wanted version and the token, clears the status a previous
    /// agent left, and starts `capw-node managed`. Blocks briefly.
    ///
    /// # Errors
    ///
    /// [`ServiceError`].
    pub fn launch_service(&self, order: &ServiceLaunchOrder) -> Result<(), ServiceError> {
        let dir = self.dir.join(&order.id);
        let files = ServiceDir(dir.clone());
        if process::read_pid(&files.pid_file()).is_some_and(|pid| process::alive(pid, &dir)) {
            return Ok(());
        }
        let bin = self.binaries.bin_dir(&with_v(&order.version))?;
        for path in [files.logs(), files.pki()] {
            fs::create_dir_all(&path).map_err(|source| ServiceError::Write { path, source })?;
        }
        write_new(&files.pki().join("ca.crt"), &order.ca_cert_pem, 0o644)?;
        write_new(&files.pki().join("ca.key"), &order.ca_key_pem, 0o600)?;
        sync_file(&files.wanted(), &wanted_line(&order.version, &bin), 0o644)?;
        sync_file(
            &files.tokens(),
            &tokens_line(&order.join_token, order.join_token_expires),
            0o600,
        )?;
        for stale in [files.status(), files.served_version()] {
            match fs::remove_file(&stale) {
                Err(e) if e.kind() != io::ErrorKind::NotFound => {
                    return Err(ServiceError::Write {
                        path: stale,
                        source: e,
                    });
                }
                _ => {}
            }
        }
        let address = order.address.to_string();
        let port = order.port.to_string();
        let args = [
            "managed",
            "--root",
            path_str(&dir),
            "--address",
            &address,
            "--port",
            &port,
            "--cluster",
            &order.cluster,
        ];
        process::spawn_detached(
            &bin.join(AGENT),
            &args,
            &dir,
            &files.logs().join("agent.log"),
            &files.pid_file(),
        )?;
        tracing::info!(control_plane = %order.id, version = %order.version, %address, "managed control plane agent started");
        Ok(())
    }

    /// Keeps the files of running service `plan.id` in step with the plan (the version it
    /// should serve, its current token) and says what its files report. Blocks briefly.
    ///
    /// # Errors
    ///
    /// [`ServiceError`] when a file cannot be written or the wanted version has no binaries.
    pub fn observe_service(&self, plan: &ServicePlan) -> Result<ServiceObservation, ServiceError> {
        let dir = self.dir.join(&plan.id);
        let files = ServiceDir(dir.clone());
        let Some(pid) = process::read_pid(&files.pid_file()) else {
            return Ok(ServiceObservation::NotRunning(None));
        };
        let alive = process::alive(pid, &dir);
        let status = fs::read_to_string(files.status()).unwrap_or_default();
        let status = status.trim();
        if let Some(reason) = status.strip_prefix("failed:") {
            return Ok(ServiceObservation::Failed(redact(
                reason.trim(),
                std::slice::from_ref(&plan.join_token),
            )));
        }
        if !alive {
            let tail = process::tail(&files.logs().join("agent.log"), TAIL_LINES);
            let tail = redact(&tail, std::slice::from_ref(&plan.join_token));
            return Ok(ServiceObservation::NotRunning(Some(tail)));
        }
        let bin = self.binaries.bin_dir(&with_v(&plan.version))?;
        sync_file(&files.wanted(), &wanted_line(&plan.version, &bin), 0o644)?;
        sync_file(
            &files.tokens(),
            &tokens_line(&plan.join_token, plan.join_token_expires),
            0o600,
        )?;
        let served = fs::read_to_string(files.served_version()).unwrap_or_default();
        Ok(match (status, served.trim()) {
            ("ready", served) if !served.is_empty() => {
                ServiceObservation::Serving(served.to_owned())
            }
            _ => ServiceObservation::Starting,
        })
    }

    /// Stops service `id`'s agent and its components (SIGTERM to its process group, SIGKILL
    /// after a grace period, then to anything still naming its directory) and removes its
    /// directory. Blocks.
    ///
    /// # Guarantees
    ///
    /// Idempotent; on success no process of it runs and its directory is gone.
    ///
    /// # Errors
    ///
    /// [`MachinesError::Remove`] when the directory cannot be removed.
    pub fn destroy_service(&self, id: &str) -> Result<(), MachinesError> {
        let dir = self.dir.join(id);
        process::stop_group(&ServiceDir(dir.clone()).pid_file(), &dir, STOP_GRACE);
        super::remove_machine_dir(&dir)
    }
}

fn wanted_line(version: &str, bin: &Path) -> String {
    format!("{} {}\n", with_v(version), bin.display())
}

fn tokens_line(token: &str, expires: u64) -> String {
    format!("{token} {expires}\n")
}

/// Writes `content` to `path` with `mode`, unless the file exists.
fn write_new(path: &Path, content: &str, mode: u32) -> Result<(), ServiceError> {
    if path.exists() {
        return Ok(());
    }
    sync_file(path, content, mode)
}

/// Replaces `path` (atomically, with `mode`) unless it holds `content` already.
fn sync_file(path: &Path, content: &str, mode: u32) -> Result<(), ServiceError> {
    if fs::read_to_string(path).ok().as_deref() == Some(content) {
        return Ok(());
    }
    let failed = |source| ServiceError::Write {
        path: path.to_owned(),
        source,
    };
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = PathBuf::from(tmp);
    fs::write(&tmp, b"").map_err(failed)?;
    fs::set_permissions(&tmp, fs::Permissions::from_mode(mode)).map_err(failed)?;
    fs::write(&tmp, content).map_err(failed)?;
    fs::rename(&tmp, path).map_err(failed)
}

/// A path as an argument; machine paths are UTF-8 (checked when the sim starts).
fn path_str(path: &Path) -> &str {
    path.to_str().unwrap_or_default()
}
