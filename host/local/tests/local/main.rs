//! The local mode end to end, in-process: the store in a temp dir, simcloud with short
//! delays, the real provider components from `CAPW_PLUGIN_DIR` (build them first with
//! `make plugins`).

mod drain;
mod etcd;
mod faults;
mod go_sim_infra;
mod js_hooks;
mod lifecycle;
mod managed;
mod orphans;
mod py_control_plane;
mod quickstart;
mod remediation;
mod support;
mod tokens;
mod workload;
