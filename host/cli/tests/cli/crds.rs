//! `capw crds` prints the CRDs of the Rust types (what `deploy/crds.yaml` must hold; the
//! deploy tests compare that file).

use std::process::Command;

#[test]
fn crds_prints_the_crds_of_the_types() {
    let out = Command::new(env!("CARGO_BIN_EXE_capw"))
        .arg("crds")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let printed = String::from_utf8(out.stdout).unwrap();
    assert_eq!(printed, capw_api::crds_yaml().unwrap());
    assert_eq!(printed.matches("kind: CustomResourceDefinition").count(), 5);
}
