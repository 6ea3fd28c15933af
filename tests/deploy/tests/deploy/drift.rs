//! `deploy/crds.yaml` is generated: it never drifts from the Rust types.

use crate::deploy_dir;

#[test]
fn committed_crds_match_the_types() {
    let committed = std::fs::read_to_string(deploy_dir().join("crds.yaml")).unwrap();
    let generated = capw_api::crds_yaml().unwrap();
    assert!(
        committed == generated,
        "deploy/crds.yaml differs from the CRDs of the Rust types in host/api: \
         regenerate it with `make crds` and commit it"
    );
}
