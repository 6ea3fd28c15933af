//! Topology tests through the public API: one binary, one module per concern.

mod fixtures;
mod patches;
mod realistic;
mod shape;
mod variables;
