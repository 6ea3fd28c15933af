//! Tests only: see `tests/providers`.
