//! The engine's passes, run on a store in memory (redb's in-memory backend), against an
//! in-process simcloud and the real provider components from `CAPW_PLUGIN_DIR` (build them
//! first with `make plugins`). No mode is involved: what these tests show holds in both.

mod bad_input;
mod capabilities;
mod control_plane;
mod hooks;
mod rollout;
mod support;
