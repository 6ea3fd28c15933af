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
use crate::config::{ConfigError, SimCloudConfig};
use crate::faults::FaultInjector;
use crate::state::{CloudSettings, CloudState, StateError};
use crate::store::{self, StoreError};

/// Entry point: [`SimCloud::start`].
#[derive(Debug)]
pub struct SimCloud;

impl SimCloud {
    /// Validates `config`, loads the state file when it exists, binds `config.listen` and
    /// serves the API on the current tokio runtime until the handle is shut down or dropped.
    ///
    /// # Errors
    ///
    /// An invalid config, an unreadable state file, or an address that cannot be bound.
    pub async fn start(config: SimCloudConfig) -> Result<SimCloudHandle, StartError> {
        config.validate()?;
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
        let (stop, stopped) = watch::channel(false);
        let app = Arc::new(App {
            settings: CloudSettings {
                zones: config.zones,
                domain: config.domain,
                timings: config.timings,
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

    /// Stops accepting connections, answers hung requests 503, waits for open requests to
    /// finish, writes the state file a last time if a change is not on disk yet, and returns
    /// once the server is gone.
    ///
    /// # Errors
    ///
    /// [`ServeError`] when the server had failed, the last write failed, or its task panicked.
    pub async fn shutdown(mut self) -> Result<(), ServeError> {
        self.stop.send_replace(true);
        match self.task.take() {
            Some(task) => task.await.map_err(ServeError::Task)?,
            None => Ok(()),
        }
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

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}
