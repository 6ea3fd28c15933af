//! The bounds every call runs within, as named values whose docs say what they bound.

use std::time::Duration;

/// Default deadline of one call. Bounds how long a provider can hold a reconcile worker: an
/// endless loop or a hung backend ends after this, plus at most one epoch tick.
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(10);

/// Default limit of one instance's linear memory. Bounds what a provider that allocates
/// without end (or builds a huge answer) can take from the host. Large enough for Python and
/// JavaScript components, whose runtimes start at 20-40 MiB.
pub const DEFAULT_MEMORY_LIMIT: usize = 256 << 20;

/// Bytes kept per call of each of stdout and stderr; the rest is dropped and counted. Bounds what a
/// chatty or hostile provider can push into the host's logs.
pub const MAX_CAPTURED_OUTPUT: usize = 64 << 10;

/// Log records kept per call through `host-log`; later ones are dropped and counted.
pub const MAX_LOG_RECORDS_PER_CALL: u32 = 256;

/// Fields kept per log record; the rest are dropped.
pub const MAX_LOG_FIELDS: usize = 32;

/// Bytes of one log message or field value kept; the rest is cut.
pub const MAX_LOG_MESSAGE: usize = 4 << 10;

/// Most bytes the host copies out of a guest in one go: an answer, or the arguments of one
/// host call (a log record, a request). Bounds what a provider can make the host allocate, and
/// what it can push into the host's state.
pub const MAX_RESULT_BYTES: usize = 16 << 20;

/// Largest component the host loads. A Python or JavaScript provider is 12-40 MB.
pub const MAX_COMPONENT_BYTES: usize = 128 << 20;

/// Limits of one provider, set by the operator in its grants.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Deadline of each call, from the start of instantiation to the answer.
    pub call_timeout: Duration,
    /// Limit of each instance's linear memory (all its memories together), in bytes.
    pub memory: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            call_timeout: DEFAULT_CALL_TIMEOUT,
            memory: DEFAULT_MEMORY_LIMIT,
        }
    }
}

/// Engine-wide settings: the instance pool and the stacks. One per [`crate::Runtime`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PoolConfig {
    /// Concurrent component instances (so: concurrent calls) across all providers.
    pub max_concurrent_instances: u32,
    /// Core instances one component may hold. componentize-py components hold about 10,
    /// jco ones about 5, Rust ones 1-3 (plus the adapter).
    pub max_core_instances_per_component: u32,
    /// Linear memories across all instances.
    pub total_memories: u32,
    /// Tables across all instances.
    pub total_tables: u32,
    /// Elements of one table. Python and JavaScript runtimes have tables of 10-30k functions.
    pub table_elements: usize,
    /// Bytes of the VM data of one core instance (its globals, function references).
    pub max_core_instance_size: usize,
    /// Largest linear memory any instance may reach, whatever a provider's limit says.
    pub max_memory_size: usize,
    /// Wasm stack per call: bounds recursion; past it the call fails with a stack overflow.
    pub max_wasm_stack: usize,
    /// Bytes of each memory and table slot kept resident between instances and reset in
    /// place; what lies beyond is returned to the kernel. Larger costs resident memory per
    /// pool slot and saves page faults per call.
    pub keep_resident: usize,
    /// How often the epoch ticks: a call exceeds its deadline by at most this, and a busy
    /// call yields its thread this often.
    pub epoch_tick: std::time::Duration,
}

impl Default for PoolConfig {
    fn default() -> Self {
        Self {
            max_concurrent_instances: 256,
            max_core_instances_per_component: 32,
            total_memories: 512,
            total_tables: 1024,
            table_elements: 65_536,
            max_core_instance_size: 1 << 20,
            max_memory_size: 1 << 30,
            max_wasm_stack: 1 << 20,
            keep_resident: 2 << 20,
            epoch_tick: Duration::from_millis(10),
        }
    }
}
