//! Integration tests of the plugin runtime against real components built from source: the
//! example provider, the hostile provider, and `.wat` fixtures.
//!
//! The components are built by `make plugins` (the README's test command does it); set
//! `CAPW_PLUGIN_DIR` to use another build.

mod support;

mod bindings_fence;
mod cache;
mod concurrency;
mod example;
mod kubeadm_control_plane;
mod loading;
mod sandbox;
mod versions;
