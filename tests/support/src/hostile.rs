//! Manifests that put the hostile component (`tests/plugins/hostile`) in each extension point
//! of a class of its own, for the tests of what the host makes of hostile answers.

/// The extension points [`manifest`] puts the hostile component in, one class each:
/// infrastructure, bootstrap, control plane and a lifecycle hook.
pub const POINTS: [&str; 4] = ["infra", "bootstrap", "cp", "hooks"];

/// The hostile component's behaviours that put hostile text in its answers: in every text
/// field, in every name, or as the error.
pub const GARBAGE: [&str; 3] = ["garbage-text", "garbage-names", "garbage-error"];

/// The hostile component and the kubeadm providers (their WasmProvider names prefixed with
/// `prefix`), and for each point of `POINTS` and each of `behaviours` the class
/// `<point>-<behaviour>` in `namespace`, with one cluster of the same name of one
/// control-plane machine and one worker. At its point the hostile component runs the
/// behaviour; elsewhere it is healthy infrastructure beside the kubeadm providers.
pub fn manifest(namespace: &str, prefix: &str, behaviours: &[&str]) -> String {
    let hostile = format!("{prefix}hostile");
    let kubeadm_bootstrap = format!("{prefix}kubeadm-bootstrap");
    let kubeadm_control_plane = format!("{prefix}kubeadm-control-plane");
    let mut text = format!(
        "apiVersion: capw.dev/v1alpha1
kind: WasmProvider
metadata: {{name: {hostile}}}
spec:
  source: {{file: {{path: capw_hostile_provider.wasm}}}}
  grants: {{callTimeoutSeconds: 5}}
---
apiVersion: capw.dev/v1alpha1
kind: WasmProvider
metadata: {{name: {kubeadm_bootstrap}}}
spec:
  source: {{file: {{path: capw_kubeadm_bootstrap.wasm}}}}
  # The healthy bootstrap provider makes each cluster's keys; many clusters at once on a
  # loaded machine must not run into the default deadline (what is under test is the
  # hostile provider beside it).
  grants: {{callTimeoutSeconds: 60}}
---
apiVersion: capw.dev/v1alpha1
kind: WasmProvider
metadata: {{name: {kubeadm_control_plane}}}
spec:
  source: {{file: {{path: capw_kubeadm_control_plane.wasm}}}}
"
    );
    for point in POINTS {
        for behaviour in behaviours {
            let hostile_config = format!("{{behaviour: {behaviour}}}");
            let pick = |at: &str, hostile_here: String, healthy: String| {
                if at == point { hostile_here } else { healthy }
            };
            let infra = pick(
                "infra",
                hostile_config.clone(),
                "{behaviour: healthy}".into(),
            );
            let bootstrap = pick(
                "bootstrap",
                format!("{{provider: {hostile}, config: {hostile_config}}}"),
                // ECDSA keys: RSA key generation for dozens of clusters at once is seconds of
                // CPU each on a loaded machine, and the keys are not what is under test.
                format!("{{provider: {kubeadm_bootstrap}, config: {{keyAlgorithm: ecdsa-p256}}}}"),
            );
            let control_plane = pick(
                "cp",
                format!("provider: {hostile}, config: {hostile_config}"),
                format!("provider: {kubeadm_control_plane}, config: {{}}"),
            );
            let hooks = pick(
                "hooks",
                format!("[{{provider: {hostile}, config: {hostile_config}}}]"),
                "[]".into(),
            );
            let name = format!("{point}-{behaviour}");
            text.push_str(&format!(
                "---
apiVersion: capw.dev/v1alpha1
kind: ClusterClass
metadata: {{name: {name}, namespace: {namespace}}}
spec:
  infrastructure: {{provider: {hostile}, config: {infra}}}
  controlPlane: {{{control_plane}, machineInfrastructure: {{config: {infra}}}, bootstrap: {bootstrap}}}
  workers:
    machineDeployments:
      - {{class: default-worker, infrastructure: {{config: {infra}}}, bootstrap: {bootstrap}}}
  lifecycleHooks: {hooks}
---
apiVersion: capw.dev/v1alpha1
kind: Cluster
metadata: {{name: {name}, namespace: {namespace}}}
spec:
  topology:
    classRef: {{name: {name}}}
    version: v1.34.4
    controlPlane: {{replicas: 1}}
    workers:
      machineDeployments:
        - {{class: default-worker, name: md-0, replicas: 1}}
"
            ));
        }
    }
    text
}
