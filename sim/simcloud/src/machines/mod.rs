//! Real boot: instances and load balancers as local processes on loopback addresses.
//!
//! Each instance and load balancer has a directory `machines_dir/<id>` (layout in
//! `plan/CONTRACT.md`: `rootfs/`, `status`, `agent.pid`, `logs/`). Booting an instance does
//! what cloud-init and kubeadm would on a real machine:
//!
//! 1. the cloud-config's `write_files` are written below `DIR/rootfs` with their modes;
//! 2. the Kubernetes version is read from `/etc/kubernetes/capw/kubernetes-version`, and the
//!    boot fails ("no image for Kubernetes v1.33.0; this cloud has v1.34.4, v1.35.4") when
//!    the binaries root has no `<version>/bin`;
//! 3. `kubeadm config validate` of that version judges the kubeadm documents: its refusal,
//!    trimmed and with tokens hidden, is the reason;
//! 4. the sim's own boot check ([`crate::boot_check`]) then decides only what kubeadm cannot
//!    judge, because it needs the cloud's records: that the data points at the cluster's
//!    endpoint and carries the token and CA cert hash registered for the cluster;
//! 5. the agent `capw-node boot` starts, detached in its own process group (it outlives the
//!    sim: machines are the cloud's, not the sim's); the instance stays `booting` until
//!    `DIR/status` says `ready` or `failed: reason`, or the agent dies.
//!
//! A load balancer is one `capw-node lb` whose backends file lists its cluster's `running`
//! control-plane instances. A managed control plane is one `capw-node managed` running its
//! control-plane components on its own address ([`service`]'s docs hold its files). Deleting stops everything that names the directory and removes
//! it. Everything is level-triggered: [`driver`] compares the state with pid files and
//! `/proc` a few times a second, so a restarted sim re-adopts what still runs, restarts a
//! balancer that is gone and fails an instance whose agent is gone.
//!
//! Every function here blocks (processes, files); async callers use `spawn_blocking`.

mod agent;
pub(crate) mod driver;
mod images;
mod kubeadm;
mod lb;
mod process;
mod redact;
mod rootfs;
mod service;

use std::collections::{BTreeSet, HashMap};
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

pub use agent::{LaunchError, Observation};
pub use images::ImageError;
pub use kubeadm::KubeadmError;
pub use lb::LoadBalancerError;
pub use process::ProcessError;
pub use rootfs::RootfsError;
pub use service::{ServiceError, ServiceObservation};

use crate::config::RealBoot;
use crate::server::lock;
use images::KubeBinaries;

/// The machines directory could not be used or cleaned.
#[derive(Debug, thiserror::Error)]
pub enum MachinesError {
    /// The machines directory could not be created or resolved.
    #[error("machines directory {path}")]
    Dir {
        /// The directory.
        path: PathBuf,
        /// The cause.
        #[source]
        source: io::Error,
    },
    /// The machines directory is not UTF-8, which processes' arguments need.
    #[error("machines directory {path} is not a UTF-8 path")]
    NotUtf8 {
        /// The directory.
        path: PathBuf,
    },
    /// A machine's directory could not be removed.
    #[error("remove {path}")]
    Remove {
        /// The directory.
        path: PathBuf,
        /// The cause.
        #[source]
        source: io::Error,
    },
}

/// The machines of one real-boot cloud.
pub(crate) struct Machines {
    binaries: KubeBinaries,
    /// Absolute and canonical, so that `/proc/<pid>/cmdline` matches it.
    dir: PathBuf,
    /// One lock per machine: a launch and a destroy of the same machine never overlap.
    locks: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
}

impl Machines {
    /// The machines of `real`, creating its machines directory.
    ///
    /// # Errors
    ///
    /// The directory cannot be created or resolved, or is not UTF-8.
    pub(crate) fn open(real: &RealBoot) -> Result<Self, MachinesError> {
        let dir = canonical_dir(&real.machines_dir)?;
        Ok(Machines {
            binaries: KubeBinaries::new(real.kube_binaries.clone()),
            dir,
            locks: Mutex::new(HashMap::new()),
        })
    }

    /// The machines directory, canonical.
    pub(crate) fn dir(&self) -> &Path {
        &self.dir
    }

    /// The lock of machine `id`.
    pub(crate) fn lock_of(&self, id: &str) -> Arc<tokio::sync::Mutex<()>> {
        lock(&self.locks).entry(id.to_owned()).or_default().clone()
    }

    /// Sets (`on`) or clears fault `fault` of instance `id`: the file `faults/<fault>` in the
    /// machine's directory, which its agent looks for (the names are [`fault`]'s). Setting a
    /// fault of an instance whose agent has not started yet is fine: the agent finds the file
    /// when it does.
    ///
    /// # Errors
    ///
    /// The file cannot be written or removed.
    pub(crate) fn set_instance_fault(&self, id: &str, fault: &str, on: bool) -> io::Result<()> {
        // `id` is the cloud's own (`i-<n>`), looked up in its state: never a path.
        set_flag_file(&self.dir.join(id).join("faults"), fault, on)
    }

    /// Forgets the lock of a destroyed machine.    /// Forgets the lock of a destroyed machine.
    pub(crate) fn forget(&self, id: &str) {
        lock(&self.locks).remove(id);
    }

    /// Destroys every machine and balancer directory whose id is not in `known` (left by a
    /// delete that a crash interrupted). Blocks.
    pub(crate) fn destroy_orphans(&self, known: &BTreeSet<String>) {
        for id in machine_ids(&self.dir) {
            if known.contains(&id) {
                continue;
            }
            let result = if id.starts_with("lb-") {
                self.destroy_load_balancer(&id)
            } else if id.starts_with("mcp-") {
                self.destroy_service(&id)
            } else {
                self.destroy_instance(&id)
            };
            match result {
                Ok(()) => tracing::info!(id, "destroyed a machine the cloud no longer has"),
                Err(e) => tracing::warn!(id, error = %crate::error_chain(&e), "destroy orphan"),
            }
        }
    }
}

/// The fault files of an instance's machine, in `DIR/faults/`: while one exists, the agent
/// (`capw-node`) keeps the fault in force; removing it ends the fault.
pub(crate) mod fault {
    /// The kubelet stand-in sends no heartbeats and updates no Pods.
    pub(crate) const KUBELET_STOPPED: &str = "kubelet-stopped";
    /// The kube-apiserver of a control-plane machine is killed and kept down.
    pub(crate) const API_SERVER_STOPPED: &str = "kube-apiserver-stopped";
    /// The etcd member of a control-plane machine is killed and kept down.
    pub(crate) const ETCD_STOPPED: &str = "etcd-stopped";
    /// The kubelet stand-in does not register its Node (yet).
    pub(crate) const NODE_UNREGISTERED: &str = "node-unregistered";
}

/// Creates (`on`, with `dir` when missing) or removes the file `dir/name`; a missing file is
/// removed already.
fn set_flag_file(dir: &Path, name: &str, on: bool) -> io::Result<()> {
    let file = dir.join(name);
    if on {
        fs::create_dir_all(dir)?;
        fs::write(&file, b"set by a fault of the sim cloud\n")
    } else {
        match fs::remove_file(&file) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
            other => other,
        }
    }
}

/// Stops every machine and load balancer under `machines_dir` and removes their
/// directories, without the etcd goodbyes a delete makes: the teardown of a whole cloud, for
/// tests and for throwing a cloud away. Use it once the sim is stopped, or it restarts what
/// it still has records of. Blocks for up to a grace period per machine.
///
/// # Errors
///
/// [`MachinesError`] when the directory cannot be read or a machine's cannot be removed; the
/// others are still destroyed.
pub fn destroy_all(machines_dir: &Path) -> Result<(), MachinesError> {
    if !machines_dir.exists() {
        return Ok(());
    }
    let dir = canonical_dir(machines_dir)?;
    let mut first_error = None;
    for id in machine_ids(&dir) {
        let machine = dir.join(&id);
        let pid_file = machine.join(if id.starts_with("lb-") {
            "lb.pid"
        } else {
            "agent.pid"
        });
        process::stop_group(&pid_file, &machine, std::time::Duration::from_secs(5));
        if let Err(e) = remove_machine_dir(&machine) {
            first_error.get_or_insert(e);
        }
    }
    first_error.map_or(Ok(()), Err)
}

/// Kills whatever still names `dir`, then removes it; a missing directory is fine.
fn remove_machine_dir(dir: &Path) -> Result<(), MachinesError> {
    process::sweep(dir);
    match fs::remove_dir_all(dir) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(source) => Err(MachinesError::Remove {
            path: dir.to_owned(),
            source,
        }),
    }
}

/// Names of the `i-<n>`, `lb-<n>` and `mcp-<n>` entries of `dir`.
fn machine_ids(dir: &Path) -> Vec<String> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|name| {
            ["i-", "lb-", "mcp-"].iter().any(|prefix| {
                name.strip_prefix(prefix)
                    .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
            })
        })
        .collect()
}

fn canonical_dir(path: &Path) -> Result<PathBuf, MachinesError> {
    let failed = |source| MachinesError::Dir {
        path: path.to_owned(),
        source,
    };
    fs::create_dir_all(path).map_err(failed)?;
    let dir = fs::canonicalize(path).map_err(failed)?;
    if dir.to_str().is_none() {
        return Err(MachinesError::NotUtf8 { path: dir });
    }
    Ok(dir)
}
