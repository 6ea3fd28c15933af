//! The process-wide runtime: one engine, one epoch ticker, one linker, one compile cache.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use wasmtime::component::Linker;
use wasmtime::{Config, Enabled, Engine, InstanceAllocationStrategy, PoolingAllocationConfig};

use crate::bindings;
use crate::cache::CompileCache;
use crate::error::LoadError;
use crate::limits::PoolConfig;
use crate::sandbox::CallState;

/// How to build a [`Runtime`].
#[derive(Debug, Clone, Default)]
pub struct RuntimeConfig {
    /// Directory of the compile cache; `None` compiles every load in memory.
    pub cache_dir: Option<PathBuf>,
    /// The instance pool and stack sizes.
    pub pool: PoolConfig,
    /// Told of every finished call (for metrics); `None` tells no one.
    pub observer: Option<Arc<dyn CallObserver>>,
}

/// Sees every provider call end: which provider, which contract function, how long it took
/// and how it ended. Called on the calling task, after the call, so it must be quick.
pub trait CallObserver: Send + Sync + std::fmt::Debug {
    /// `provider` is the name the provider was loaded as (`source_name` of
    /// [`crate::Runtime::load`]: in capw, the WasmProvider's name). `outcome` is `Ok(())` for
    /// an answer, or the failure's reason
    /// ([`crate::CallFailure::reason`]: `DeadlineExceeded`, `Trap`, `ProviderError`, ...).
    fn call_finished(
        &self,
        provider: &str,
        operation: &'static str,
        elapsed: Duration,
        outcome: Result<(), &'static str>,
    );
}

/// Counters of the runtime's work, for tests, metrics and `capw bench`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RuntimeStats {
    /// Components compiled (cache misses and rebuilds).
    pub compiles: u64,
    /// Components loaded from the compile cache.
    pub cache_hits: u64,
    /// Slots of the instance pool held right now: instances alive or being made (by calls,
    /// sessions and loads).
    pub live_instances: u64,
    /// The most slots ever held at once since the runtime was built. Never above
    /// [`PoolConfig::max_concurrent_instances`].
    pub peak_instances: u64,
    /// Calls (and loads) that found every slot taken and had to wait for one: a pool too
    /// small for the load shows here before it shows as latency.
    pub slot_waits: u64,
}

/// The process-wide plugin runtime. Cheap to share behind an `Arc`; every [`crate::Provider`]
/// keeps one.
pub struct Runtime {
    pub(crate) engine: Engine,
    pub(crate) linker: Linker<CallState>,
    pub(crate) cache: Option<CompileCache>,
    pub(crate) pool: PoolConfig,
    pub(crate) compiles: AtomicU64,
    pub(crate) cache_hits: AtomicU64,
    /// Sequence number of calls, to tell them apart in logs.
    calls: AtomicU64,
    pub(crate) observer: Option<Arc<dyn CallObserver>>,
    /// One permit per instance the pool holds: a call waits here for a free slot rather than
    /// failing with an exhausted pool when more calls run at once than the pool has room for.
    slots: Arc<tokio::sync::Semaphore>,
    /// Slots held now and at most, counted apart from the semaphore so that they tell whether
    /// it bounds the instances.
    instances: Arc<InstanceGauge>,
    /// Acquisitions of a slot that had to wait.
    slot_waits: AtomicU64,
    ticker: EpochTicker,
}

impl Runtime {
    /// Build the engine (pooling allocator, epoch interruption, stack limit), link the
    /// sandbox's imports, open the compile cache and start the epoch ticker.
    ///
    /// # Errors
    /// When the engine rejects the configuration (e.g. the pool cannot reserve its address
    /// space) or the cache directory cannot be opened.
    pub fn new(config: RuntimeConfig) -> Result<Arc<Self>, LoadError> {
        let pool = config.pool;
        let engine = Engine::new(&engine_config(&pool)).map_err(LoadError::Engine)?;
        let linker = sandbox_linker(&engine).map_err(LoadError::Engine)?;
        let cache = config
            .cache_dir
            .as_deref()
            .map(CompileCache::open)
            .transpose()
            .map_err(|source| LoadError::Cache {
                source_name: "compile cache".into(),
                source,
            })?;
        let ticker =
            EpochTicker::start(engine.clone(), pool.epoch_tick).map_err(LoadError::EpochTicker)?;
        let slots = Arc::new(tokio::sync::Semaphore::new(
            pool.max_concurrent_instances as usize,
        ));
        Ok(Arc::new(Runtime {
            engine,
            linker,
            cache,
            pool,
            compiles: AtomicU64::new(0),
            cache_hits: AtomicU64::new(0),
            calls: AtomicU64::new(0),
            observer: config.observer,
            slots,
            instances: Arc::default(),
            slot_waits: AtomicU64::new(0),
            ticker,
        }))
    }

    /// The wasmtime engine, shared by every provider.
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// The runtime's counters now; each is read on its own, so under load they need not
    /// describe one instant.
    pub fn stats(&self) -> RuntimeStats {
        RuntimeStats {
            compiles: self.compiles.load(Ordering::Relaxed),
            cache_hits: self.cache_hits.load(Ordering::Relaxed),
            live_instances: self.instances.live.load(Ordering::Relaxed),
            peak_instances: self.instances.peak.load(Ordering::Relaxed),
            slot_waits: self.slot_waits.load(Ordering::Relaxed),
        }
    }

    /// The span every call of a provider runs in: guest logs, captured output and the call's
    /// outcome are recorded inside it.
    pub(crate) fn call_span(&self, provider: &str, operation: &'static str) -> tracing::Span {
        let call = self.calls.fetch_add(1, Ordering::Relaxed);
        tracing::info_span!("provider_call", provider, operation, call)
    }

    /// A slot of the instance pool, held for as long as an instance lives; waits while every
    /// slot is taken.
    pub(crate) async fn slot(&self) -> Slot {
        let permit = match self.slots.clone().try_acquire_owned() {
            Ok(permit) => permit,
            Err(_) => {
                self.slot_waits.fetch_add(1, Ordering::Relaxed);
                self.slots
                    .clone()
                    .acquire_owned()
                    .await
                    .expect("the slots semaphore is never closed")
            }
        };
        Slot::new(permit, self.instances.clone())
    }

    /// The engine settings in force.
    pub fn pool(&self) -> &PoolConfig {
        &self.pool
    }
}

impl Drop for Runtime {
    fn drop(&mut self) {
        self.ticker.stop();
    }
}

/// Pool slots held now and at most at once.
#[derive(Debug, Default)]
struct InstanceGauge {
    live: AtomicU64,
    peak: AtomicU64,
}

/// A slot of the instance pool: while it is held, one instance may live. Hold it until the
/// instance (and its store) is dropped.
pub(crate) struct Slot {
    gauge: Arc<InstanceGauge>,
    _permit: tokio::sync::OwnedSemaphorePermit,
}

impl Slot {
    fn new(permit: tokio::sync::OwnedSemaphorePermit, gauge: Arc<InstanceGauge>) -> Self {
        let live = gauge.live.fetch_add(1, Ordering::Relaxed) + 1;
        gauge.peak.fetch_max(live, Ordering::Relaxed);
        Slot {
            gauge,
            _permit: permit,
        }
    }
}

impl Drop for Slot {
    /// Runs before the permit (a field) is given back, so the next holder counts itself only
    /// after this one is gone: the gauge never shows more slots than the semaphore grants.
    fn drop(&mut self) {
        self.gauge.live.fetch_sub(1, Ordering::Relaxed);
    }
}

fn engine_config(pool: &PoolConfig) -> Config {
    let mut pooling = PoolingAllocationConfig::new();
    pooling
        .total_component_instances(pool.max_concurrent_instances)
        .total_core_instances(pool.max_concurrent_instances * 4)
        .total_memories(pool.total_memories)
        .total_tables(pool.total_tables)
        .total_stacks(pool.max_concurrent_instances)
        .max_core_instances_per_component(pool.max_core_instances_per_component)
        .max_memories_per_component(pool.max_core_instances_per_component)
        .max_tables_per_component(pool.max_core_instances_per_component)
        .max_memories_per_module(1)
        .max_tables_per_module(4)
        .table_elements(pool.table_elements)
        .max_core_instance_size(pool.max_core_instance_size)
        .max_component_instance_size(pool.max_core_instance_size)
        .max_memory_size(pool.max_memory_size)
        // Reset a slot for its next instance by rewriting only the pages the last one dirtied
        // (found with PAGEMAP_SCAN, Linux 6.7+) instead of unmapping them: the next call
        // then takes no page faults on them. Elsewhere this falls back to `madvise`.
        .pagemap_scan(Enabled::Auto)
        .linear_memory_keep_resident(pool.keep_resident)
        .table_keep_resident(pool.keep_resident);
    let mut config = Config::new();
    config
        .wasm_component_model(true)
        .epoch_interruption(true)
        .max_wasm_stack(pool.max_wasm_stack)
        .async_stack_size(pool.max_wasm_stack + (1 << 20))
        .memory_init_cow(true)
        .parallel_compilation(true)
        .allocation_strategy(InstanceAllocationStrategy::Pooling(pooling));
    config
}

/// The imports every provider may use: WASI p2 (with the sandbox's deny-by-default context),
/// wasi:http's outgoing handler (through the grant hook), and the contract's host interfaces.
fn sandbox_linker(engine: &Engine) -> wasmtime::Result<Linker<CallState>> {
    let mut linker = Linker::new(engine);
    wasmtime_wasi::p2::add_to_linker_async(&mut linker)?;
    // The clocks again, from the call's own clock context rather than its WASI context: most
    // calls read a clock and use nothing else of WASI.
    linker.allow_shadowing(true);
    {
        use wasmtime_wasi::clocks::WasiClocks;
        use wasmtime_wasi::p2::bindings::clocks::{monotonic_clock, wall_clock};
        wall_clock::add_to_linker::<_, WasiClocks>(&mut linker, CallState::clocks)?;
        monotonic_clock::add_to_linker::<_, WasiClocks>(&mut linker, CallState::clocks)?;
    }
    linker.allow_shadowing(false);
    wasmtime_wasi_http::p2::add_only_http_to_linker_async(&mut linker)?;
    bindings::v0_1::add_to_linker(&mut linker)?;
    bindings::v0_2::add_to_linker(&mut linker)?;
    bindings::v0_3::add_to_linker(&mut linker)?;
    Ok(linker)
}

/// Advances the engine's epoch on a steady beat; every call's deadline is counted in these
/// ticks, and a running guest yields to the executor on each.
struct EpochTicker {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl EpochTicker {
    fn start(engine: Engine, tick: std::time::Duration) -> std::io::Result<Self> {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::Builder::new()
            .name("capw-epoch".into())
            .spawn(move || {
                while !flag.load(Ordering::Relaxed) {
                    std::thread::sleep(tick);
                    engine.increment_epoch();
                }
            })?;
        Ok(EpochTicker {
            stop,
            thread: Some(thread),
        })
    }

    fn stop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
