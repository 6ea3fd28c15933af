//! Tests of the example providers in other languages (`plugins/examples/`); see
//! `tests/examples.rs`. The library is empty.
