//! The reference providers as built `.wasm` components, loaded in capw's runtime and driven
//! against an in-process simcloud. Build the components first: `make plugins`.

mod driver;
mod support;

mod faults;
mod hand_driven;
mod kubeadm_bootstrap;
mod sim_infra;
