//! The memory limiter: one budget for all of an instance's linear memories.

use wasmtime::{ResourceLimiter, Result as WasmResult};

/// Tracks one instance's memory against its limit: the sum over all its linear memories, so
/// a component of several core modules (Python, JavaScript) gets one budget, not one each.
pub(crate) struct MemoryLimiter {
    limit: usize,
    /// Bytes of all linear memories of the instance now.
    total: usize,
    /// Largest memory any linear memory of the instance asked for, granted or not.
    pub(crate) peak: usize,
    /// A growth was refused because of the limit.
    pub(crate) hit: bool,
}

impl MemoryLimiter {
    /// A limiter of `limit` bytes for an instance that has no memory yet.
    pub(super) fn new(limit: usize) -> Self {
        MemoryLimiter {
            limit,
            total: 0,
            peak: 0,
            hit: false,
        }
    }
}

impl ResourceLimiter for MemoryLimiter {
    fn memory_growing(
        &mut self,
        current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> WasmResult<bool> {
        let total = self.total.saturating_add(desired.saturating_sub(current));
        self.peak = self.peak.max(total);
        if total > self.limit {
            self.hit = true;
            return Ok(false);
        }
        self.total = total;
        Ok(true)
    }

    fn table_growing(
        &mut self,
        _current: usize,
        _desired: usize,
        _maximum: Option<usize>,
    ) -> WasmResult<bool> {
        // Tables are bounded by the pool's `table_elements`.
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limiter_refuses_growth_past_limit_and_remembers() {
        let mut l = MemoryLimiter {
            limit: 100,
            total: 0,
            peak: 0,
            hit: false,
        };
        assert!(l.memory_growing(0, 60, None).unwrap());
        assert!(!l.hit);
        // A second memory shares the budget.
        assert!(l.memory_growing(0, 40, None).unwrap());
        assert!(!l.memory_growing(60, 61, None).unwrap());
        assert!(l.hit);
        assert_eq!(l.peak, 101);
        assert_eq!(l.total, 100);
    }
}
