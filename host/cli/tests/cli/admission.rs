//! `capw apply` refuses what a reconcile pass would block on, before it stores anything: the
//! corpus of tests/admission over what it stores first (the quickstart, the managed example's
//! class, a provider that neither scales nor upgrades); the Kubernetes mode's webhook refuses
//! the same corpus with the same messages (host/kube/tests/kube/admission.rs).

use capw_store::Store;
use capw_test_support::admission::{LocalState, admitted, refusal, refused};
use serde_json::Value;

/// Every object of every kind the state file holds.
fn everything(state: &LocalState) -> Vec<Value> {
    let store = Store::open(&state.state_file()).unwrap();
    let mut all = Vec::new();
    for kind in capw_api::KINDS {
        all.extend(store.list(kind, None).unwrap());
    }
    all
}

#[test]
fn the_corpus_is_refused_naming_the_field_and_nothing_is_stored() {
    let state = LocalState::with_stored(env!("CARGO_BIN_EXE_capw").as_ref());
    let before = everything(&state);
    let cases = refused();
    assert!(cases.len() >= 30, "{} cases", cases.len());
    for case in &cases {
        let (ok, out, err) = state.apply(&case.file);
        assert!(!ok, "{} was stored: {out}", case.name());
        assert!(!err.contains("panicked"), "{}: {err}", case.name());
        // The refusal is said once, not also as a warning of the provider call behind it.
        assert!(!err.contains("WARN"), "{}: {err}", case.name());
        let why = refusal(&err).unwrap_or_else(|| panic!("{}: no refusal in {err}", case.name()));
        case.assert_refused_in(&why);
        assert!(
            err.contains("nothing was stored") || err.contains("document 1"),
            "{err}"
        );
    }
    assert_eq!(
        everything(&state),
        before,
        "a refused apply changed the state"
    );

    for case in admitted() {
        let (ok, out, err) = state.apply(&case.file);
        assert!(ok, "{} refused: {err}", case.name());
        assert!(
            out.contains("created") || out.contains("configured"),
            "{out}"
        );
    }
}

/// The local mode has no management cluster to run a hosted control plane's Pods in: a class
/// whose control-plane provider declares the hosted shape is refused at `capw apply`, saying
/// why and what to do instead, and nothing is stored. (The Kubernetes mode admits it:
/// host/kube/tests/kube/hosted.rs.)
#[test]
fn a_hosted_class_is_refused_in_the_local_mode_saying_why() {
    let state = LocalState::with_stored(env!("CARGO_BIN_EXE_capw").as_ref());
    let before = everything(&state);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("hosted.yaml");
    std::fs::write(
        &file,
        "apiVersion: capw.dev/v1alpha1\nkind: WasmProvider\nmetadata:\n  name: scripted-hosted\n\
         spec:\n  source:\n    file:\n      path: capw_scripted_hosted_provider.wasm\n---\n\
         apiVersion: capw.dev/v1alpha1\nkind: ClusterClass\nmetadata:\n  name: hosted\n  \
         namespace: default\nspec:\n  infrastructure:\n    provider: sim-infra\n    config:\n      \
         controlPlaneEndpoint: none\n  controlPlane:\n    provider: scripted-hosted\n    \
         config: {}\n",
    )
    .unwrap();
    let (ok, out, err) = state.apply(&file);
    assert!(!ok, "the hosted class was stored: {out}");
    let why = refusal(&err).unwrap_or_else(|| panic!("no refusal in {err}"));
    assert!(
        why.contains("ClusterClass spec.controlPlane.provider: the control-plane provider scripted-hosted declares control-plane-shape hosted: a hosted control plane runs as Pods of a management cluster, and the local mode has none"),
        "{why}"
    );
    assert!(why.contains("capw controller"), "{why}");
    assert_eq!(
        everything(&state),
        before,
        "a refused apply changed the state"
    );
}
