//! Starting and stopping a sim cloud, and the state its handlers share.

use std::io;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{SystemTime, UNIX_EPOCH};

use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::api::{self, ApiError};
use crate::config::{BootMode, ConfigError, SimCloudConfig};
use crate::faults::FaultInjector;
use crate::machines::{self, Machines, MachinesError};
use crate::state::{CloudSettings, CloudState, StateError};
use crate::store::{self, StoreError};

/// Entry point: [`SimCloud::start`].
#[derive(Debug)]
pub struct SimCloud;

impl SimCloud {
    /// Validates `config`, loads the state file when it exists, binds `config.listen` and
    /// serves the API on the current tokio runtime until the handle is shut down or dropped.
    ///
    /// With [`BootMode::Real`], it also runs the cloud's machines ([`crate::machines`]):
    /// what still runs from an earlier start on the same state is adopted, a load balancer
    /// that is gone is started again, an instance whose agent is gone fails, and a machine
    /// the state has no record of (left by a delete a crash cut short) is destroyed before the
    /// API serves.
    ///
    /// # Errors
    ///
    /// An invalid config, an unreadable state file, an unusable machines directory, or an
    /// address that cannot be bound.
    pub async fn start(config: SimCloudConfig) -> Result<SimCloudHandle, StartError> {
        config.validate()?;
        let machines = match &config.boot {
            BootMode::Simulated => None,
            BootMode::Real(real) => Some(Arc::new(Machines::open(real)?)),
        };
        let state = match &config.state_file {
            Some(path) => store::load(path)?.unwrap_or_default(),
            None => CloudState::default(),
        };
        let listener =
            TcpListener::bind(config.listen)
                .await
                .map_err(|source| StartError::Bind {
                    addr: config.listen,
                    source,
                })?;
        let addr = listener.local_addr().map_err(|source| StartError::Bind {
            addr: config.listen,
            source,
        })?;
        if let Some(m) = &machines {
            // Before the API serves: an instance created by the first requests must never be
            // taken for an orphan of a sweep that listed the state before it.
            let known = state.machine_ids();
            let m = m.clone();
            let _ = tokio::task::spawn_blocking(move || m.destroy_orphans(&known)).await;
        }
        let (stop, stopped) = watch::channel(false);
        let app = Arc::new(App {
            settings: CloudSettings {
                zones: config.zones,
                domain: config.domain,
                timings: config.timings,
                real_boot: machines.is_some(),
                loopback_seed: loopback_seed(),
            },
            token: config.token,
            live: Mutex::new(Live {
                state,
                generation: 0,
            }),
            written: tokio::sync::Mutex::new(0),
            state_file: config.state_file,
            faults: Mutex::new(FaultInjector::new(config.faults)),
            stopped: stopped.clone(),
            machines: machines.clone(),
        });
        let driver = machines.as_ref().map(|m| {
            tokio::spawn(machines::driver::run(
                app.clone(),
                m.clone(),
                stopped.clone(),
            ))
        });
        let router = api::router(app.clone());
        let mut stopping = stopped;
        let task = tokio::spawn(async move {
            axum::serve(listener, router)
                .with_graceful_shutdown(async move {
                    // An error means the handle is gone, which also means stop.
                    let _ = stopping.wait_for(|stop| *stop).await;
                })
                .await
                .map_err(ServeError::Io)?;
            // A request cancelled mid-write (its client went away) may have left a change
            // in memory only.
            app.flush().await
        });
        tracing::info!(%addr, "sim cloud listening");
        Ok(SimCloudHandle {
            addr,
            stop,
            task: Some(task),
            driver,
            machines_dir: machines.map(|m| m.dir().to_owned()),
        })
    }
}

/// A running sim cloud.
///
/// # Caveats
///
/// Dropping the handle asks the server to stop without waiting for it; call
/// [`SimCloudHandle::shutdown`] to wait until every connection is closed (and so every state
/// change is on disk) before, say, starting another sim on the same state file.
#[derive(Debug)]
pub struct SimCloudHandle {
    addr: SocketAddr,
    stop: watch::Sender<bool>,
    task: Option<JoinHandle<Result<(), ServeError>>>,
    /// The machines loop of a real-boot cloud.
    driver: Option<JoinHandle<()>>,
    machines_dir: Option<PathBuf>,
}

impl SimCloudHandle {
    /// The address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://<addr>`, without a trailing slash.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The machines directory of a real-boot cloud, canonical; `None` when boot is
    /// simulated.
    pub fn machines_dir(&self) -> Option<&std::path::Path> {
        self.machines_dir.as_deref()
    }

    /// Stops accepting connections, answers hung requests 503, waits for open requests to
    /// finish, writes the state file a last time if a change is not on disk yet, and returns
    /// once the server is gone.
    ///
    /// # Guarantees
    ///
    /// A real-boot cloud's machines and load balancers keep running: they are the cloud's,
    /// and a sim started again on the same state file adopts them. Launches under way finish
    /// first. [`SimCloudHandle::destroy_machines`] stops them too.
    ///
    /// # Errors
    ///
    /// [`ServeError`] when the server had failed, the last write failed, or its task panicked.
    pub async fn shutdown(mut self) -> Result<(), ServeError> {
        self.stop.send_replace(true);
        if let Some(driver) = self.driver.take() {
            driver.await.map_err(ServeError::Task)?;
        }
        match self.task.take() {
            Some(task) => task.await.map_err(ServeError::Task)?,
            None => Ok(()),
        }
    }

    /// Shuts the sim down as [`SimCloudHandle::shutdown`] does, then stops every machine
    /// and load balancer of a real-boot cloud and removes their directories
    /// ([`machines::destroy_all`]): the teardown of tests. Its records stay in the state
    /// file, whose machines are then gone.
    ///
    /// # Errors
    ///
    /// [`ServeError`] from the shutdown, or [`ServeError::Machines`] when a machine's
    /// directory cannot be removed.
    pub async fn destroy_machines(mut self) -> Result<(), ServeError> {
        let dir = self.machines_dir.take();
        let stopped = self.shutdown().await;
        if let Some(dir) = dir {
            tokio::task::spawn_blocking(move || machines::destroy_all(&dir))
                .await
                .map_err(ServeError::Task)?
                .map_err(ServeError::Machines)?;
        }
        stopped
    }
}

impl Drop for SimCloudHandle {
    fn drop(&mut self) {
        self.stop.send_replace(true);
    }
}

/// A sim cloud could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// The configuration is invalid.
    #[error("invalid configuration")]
    Config(#[from] ConfigError),
    /// The state file could not be loaded.
    #[error("load state")]
    Load(#[from] StoreError),
    /// The machines directory of a real boot cannot be used.
    #[error("machines directory")]
    Machines(#[from] MachinesError),
    /// The listen address could not be bound.
    #[error("bind {addr}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// The cause.
        #[source]
        source: io::Error,
    },
}

/// A sim cloud stopped badly.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// Serving failed.
    #[error("serve")]
    Io(#[source] io::Error),
    /// The server task panicked or was cancelled.
    #[error("server task")]
    Task(#[source] tokio::task::JoinError),
    /// The last write of the state file failed.
    #[error("write the state a last time")]
    Persist(#[source] StoreError),
    /// A machine could not be destroyed.
    #[error("destroy machines")]
    Machines(#[source] MachinesError),
}

/// The state behind the lock, with a generation counting its changes.
struct Live {
    state: CloudState,
    generation: u64,
}

/// What every handler shares.
pub(crate) struct App {
    pub(crate) settings: CloudSettings,
    pub(crate) token: String,
    live: Mutex<Live>,
    /// The generation last written to the state file. Held while writing, so writes are
    /// ordered and a stale snapshot never replaces a newer one.
    written: tokio::sync::Mutex<u64>,
    state_file: Option<PathBuf>,
    pub(crate) faults: Mutex<FaultInjector>,
    /// Turns `true` when the sim stops.
    pub(crate) stopped: watch::Receiver<bool>,
    /// The machines of a real-boot cloud.
    pub(crate) machines: Option<Arc<Machines>>,
}

/// Whether an operation changes the state (and so must be persisted when it succeeds).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Access {
    Read,
    Write,
}

impl App {
    /// Runs `op` on the state, first advanced to now, and persists the state when it changed.
    ///
    /// # Errors
    ///
    /// `op`'s error, or a failure to persist a change (the change stays in memory).
    pub(crate) async fn run<T>(
        &self,
        access: Access,
        op: impl FnOnce(&mut CloudState, u64, &CloudSettings) -> Result<T, StateError>,
    ) -> Result<T, ApiError> {
        let now = now_ms();
        let (result, snapshot) = {
            let mut live = lock(&self.live);
            let advanced = live.state.advance(now, &self.settings);
            let result = op(&mut live.state, now, &self.settings);
            let changed = advanced || (access == Access::Write && result.is_ok());
            let snapshot = if changed && self.state_file.is_some() {
                live.generation += 1;
                Some((live.generation, store::encode(&live.state)))
            } else {
                None
            };
            (result, snapshot)
        };
        if let Some((generation, bytes)) = snapshot {
            self.persist(generation, bytes).await?;
        }
        result.map_err(ApiError::from)
    }

    /// Writes the state file if the state changed since it was last written.
    async fn flush(&self) -> Result<(), ServeError> {
        let (generation, bytes) = {
            let live = lock(&self.live);
            (live.generation, store::encode(&live.state))
        };
        let Some(path) = self.state_file.clone() else {
            return Ok(());
        };
        let mut written = self.written.lock().await;
        if generation <= *written {
            return Ok(());
        }
        let bytes = bytes.map_err(ServeError::Persist)?;
        tokio::task::spawn_blocking(move || store::save(&path, &bytes))
            .await
            .map_err(ServeError::Task)?
            .map_err(ServeError::Persist)?;
        *written = generation;
        Ok(())
    }

    async fn persist(
        &self,
        generation: u64,
        bytes: Result<Vec<u8>, StoreError>,
    ) -> Result<(), ApiError> {
        let Some(path) = self.state_file.clone() else {
            return Ok(());
        };
        let mut written = self.written.lock().await;
        if generation <= *written {
            return Ok(());
        }
        let outcome = match bytes {
            Ok(bytes) => tokio::task::spawn_blocking(move || store::save(&path, &bytes))
                .await
                .map_err(|e| ApiError::internal(format!("persist state: {e}")))?,
            Err(e) => Err(e),
        };
        outcome.map_err(|e| {
            let message = format!("persist state: {}", crate::error_chain(&e));
            tracing::error!("{message}");
            ApiError::internal(message)
        })?;
        *written = generation;
        Ok(())
    }
}

/// Locks `mutex`, recovering from poisoning: every critical section leaves the data valid.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A seed that differs between sims on one host: the process-random hasher keys, the pid
/// and the time.
fn loopback_seed() -> u64 {
    use std::hash::{BuildHasher as _, Hasher as _};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u32(std::process::id());
    hasher.write_u64(now_ms());
    hasher.finish()
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}
