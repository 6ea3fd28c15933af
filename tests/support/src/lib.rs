//! Where the provider components built by `make plugins` are, for tests and benchmarks; a
//! real OCI registry ([`registry::TestRegistry`]); large components ([`big::with_padding`]);
//! with the feature `kube`, a real kube-apiserver and etcd ([`KubeEnv`](crate::kube::KubeEnv)).

pub mod admission;
pub mod big;
pub mod bounded;
pub mod hostile;
#[cfg(feature = "kube")]
pub mod kube;
pub mod real_boot;
pub mod registry;
#[cfg(feature = "kube")]
pub mod silent;

use std::path::PathBuf;
use std::sync::Once;

/// The directory of the built components: `CAPW_PLUGIN_DIR` (the Makefile exports it, so it
/// follows `CARGO_TARGET_DIR`), else the workspace's `target/wasm32-wasip2/plugin`.
pub fn plugin_dir() -> PathBuf {
    std::env::var_os("CAPW_PLUGIN_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/wasm32-wasip2/plugin")
        })
}

/// The path of the built component `name` (e.g. `capw_example_provider`).
///
/// # Panics
///
/// When it is not there, saying how to build it.
pub fn component_path(name: &str) -> PathBuf {
    let path = plugin_dir().join(format!("{name}.wasm"));
    assert!(
        path.exists(),
        "{}: build the provider components first with `make plugins`",
        path.display()
    );
    path
}

/// The bytes of the built component `name`.
///
/// # Panics
///
/// When it cannot be read, saying how to build it.
pub fn component(name: &str) -> Vec<u8> {
    let path = component_path(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Logs of the code under test into the test's output, filtered by `CAPW_LOG` (default
/// `warn`); once per test binary.
pub fn init_tracing() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        install_crypto_provider();
        let _ = tracing_subscriber::fmt()
            .with_env_filter(
                tracing_subscriber::EnvFilter::try_from_env("CAPW_LOG")
                    .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
            )
            .with_test_writer()
            .try_init();
    });
}

/// simcloud's `GET /v1/inventory` at `base_url` (its `SimCloudHandle::base_url`), decoded into
/// `T` (its `model::Inventory`): everything alive, by cluster.
///
/// # Panics
///
/// When simcloud does not answer, refuses, or answers something else.
pub async fn simcloud_inventory<T: serde::de::DeserializeOwned>(base_url: &str, token: &str) -> T {
    http()
        .get(format!("{base_url}/v1/inventory"))
        .bearer_auth(token)
        .send()
        .await
        .expect("simcloud's inventory answers")
        .error_for_status()
        .expect("simcloud's inventory succeeds")
        .json()
        .await
        .expect("simcloud's inventory is JSON")
}

/// Stops (`stopped`) or resumes the kubelet of instance `id` of the real-boot simcloud at
/// `base_url`: `PUT /v1/admin/instances/{id}/faults`.
///
/// # Panics
///
/// When simcloud does not answer or refuses.
pub async fn simcloud_kubelet(base_url: &str, token: &str, id: &str, stopped: bool) {
    let kubelet = if stopped { "stopped" } else { "running" };
    http()
        .put(format!("{base_url}/v1/admin/instances/{id}/faults"))
        .bearer_auth(token)
        .json(&serde_json::json!({ "kubelet": kubelet }))
        .send()
        .await
        .expect("simcloud answers")
        .error_for_status()
        .expect("simcloud sets the instance's fault");
}

/// Sets `faults` (simcloud's `InstanceFaults` as JSON: `kubelet`, `apiServer`, `etcd`: `stopped`
/// | `running`; `node`: `unregistered` | `registered`) of instance `id` of the real-boot
/// simcloud at `base_url`: `PUT /v1/admin/instances/{id}/faults`. Returns simcloud's answer,
/// the faults it applied.
///
/// # Panics
///
/// When simcloud does not answer or refuses, with its answer.
pub async fn simcloud_instance_faults(
    base_url: &str,
    token: &str,
    id: &str,
    faults: serde_json::Value,
) -> serde_json::Value {
    simcloud_put(
        &format!("{base_url}/v1/admin/instances/{id}/faults"),
        token,
        &faults,
    )
    .await
}

/// Sets `faults` (simcloud's `ClusterFaults` as JSON: `loadBalancer`: `silent` | `forwarding`)
/// of cluster `cluster` of the real-boot simcloud at `base_url`:
/// `PUT /v1/admin/clusters/{cluster}/faults`. Returns simcloud's answer, the faults it applied.
///
/// # Panics
///
/// When simcloud does not answer or refuses, with its answer.
pub async fn simcloud_cluster_faults(
    base_url: &str,
    token: &str,
    cluster: &str,
    faults: serde_json::Value,
) -> serde_json::Value {
    simcloud_put(
        &format!("{base_url}/v1/admin/clusters/{cluster}/faults"),
        token,
        &faults,
    )
    .await
}

/// Replaces the cloud-level faults of the simcloud at `base_url` with `faults` (its
/// `FaultConfig` as JSON; fields left out are zero): `PUT /v1/admin/faults`. Returns simcloud's
/// answer, `{"faults": ..., "stats": ...}`.
///
/// # Panics
///
/// When simcloud does not answer or refuses, with its answer.
pub async fn simcloud_set_faults(
    base_url: &str,
    token: &str,
    faults: serde_json::Value,
) -> serde_json::Value {
    simcloud_put(&format!("{base_url}/v1/admin/faults"), token, &faults).await
}

/// Has simcloud's managed control-plane service upgrade control plane `id` on its own to
/// `version` (`PUT /v1/admin/managed-control-planes/{id}/auto-upgrade`); simcloud's answer.
///
/// # Panics
///
/// When simcloud does not answer or refuses, with its answer.
pub async fn simcloud_auto_upgrade(
    base_url: &str,
    token: &str,
    id: &str,
    version: &str,
) -> serde_json::Value {
    simcloud_put(
        &format!("{base_url}/v1/admin/managed-control-planes/{id}/auto-upgrade"),
        token,
        &serde_json::json!({ "version": version }),
    )
    .await
}

/// Has the service of managed control plane `id` of the simulated simcloud at `base_url` fail
/// for `reason` (`PUT /v1/admin/managed-control-planes/{id}/fail`), as a real-boot service
/// does when it cannot start or upgrade: it turns `failed`; simcloud's answer, the control
/// plane. It must be `creating` or `updating`.
///
/// # Panics
///
/// When simcloud does not answer or refuses (a `ready` control plane, a real-boot cloud), with
/// its answer.
pub async fn simcloud_fail_control_plane(
    base_url: &str,
    token: &str,
    id: &str,
    reason: &str,
) -> serde_json::Value {
    simcloud_put(
        &format!("{base_url}/v1/admin/managed-control-planes/{id}/fail"),
        token,
        &serde_json::json!({ "reason": reason }),
    )
    .await
}

/// The cloud-level faults of the simcloud at `base_url` and what they did:
/// `GET /v1/admin/faults`, `{"faults": ..., "stats": ...}`.
///
/// # Panics
///
/// When simcloud does not answer or refuses.
pub async fn simcloud_faults(base_url: &str, token: &str) -> serde_json::Value {
    http()
        .get(format!("{base_url}/v1/admin/faults"))
        .bearer_auth(token)
        .send()
        .await
        .and_then(reqwest::Response::error_for_status)
        .unwrap_or_else(|e| panic!("GET {base_url}/v1/admin/faults: {e}"))
        .json()
        .await
        .expect("simcloud's faults as JSON")
}

/// `PUT url` with `body` as JSON; the JSON answer of a success.
async fn simcloud_put(url: &str, token: &str, body: &serde_json::Value) -> serde_json::Value {
    let response = http()
        .put(url)
        .bearer_auth(token)
        .json(body)
        .send()
        .await
        .unwrap_or_else(|e| panic!("PUT {url}: simcloud does not answer: {e}"));
    let status = response.status();
    let text = response
        .text()
        .await
        .unwrap_or_else(|e| panic!("PUT {url}: reading simcloud's answer: {e}"));
    assert!(
        status.is_success(),
        "PUT {url} {body}: simcloud refused with {status}: {text}"
    );
    serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("PUT {url}: simcloud's answer is not JSON ({e}): {text}"))
}

/// Installs ring as the process's rustls crypto provider, as the capw binary does at start:
/// reqwest brings none of its own in this workspace (oci-client's `rustls-tls-no-provider`), and
/// kube and wasmtime-wasi-http build theirs from ring explicitly, so a test's first HTTP client
/// needs one installed.
pub fn install_crypto_provider() {
    // An error only says a provider is installed already.
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// An HTTP client for a test's requests (to simcloud, to an API server's plain endpoints), the
/// process's TLS provider installed first.
pub fn http() -> reqwest::Client {
    install_crypto_provider();
    reqwest::Client::new()
}

/// The quickstart's manifests (`examples/quickstart/*.yaml`, in file-name order) as one
/// multi-document YAML text.
pub fn quickstart() -> String {
    example("quickstart")
}

/// The manifests of `examples/<name>/`, its YAML files in order, as one multi-document text.
pub fn example(name: &str) -> String {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples")
        .join(name);
    yaml_files(&dir)
        .iter()
        .map(|f| std::fs::read_to_string(f).unwrap() + "\n---\n")
        .collect()
}

/// The quickstart's manifests with simcloud's address replaced by `simcloud_url` and `extra`
/// documents after them, as the JSON objects `capw apply` stores.
pub fn quickstart_objects(simcloud_url: &str, extra: &str) -> Vec<serde_json::Value> {
    let mut text = quickstart();
    text.push_str(extra);
    let text = text.replace("http://127.0.0.1:7480", simcloud_url);
    capw_api::parse_manifests(&text)
        .unwrap()
        .iter()
        .map(|o| o.to_json().unwrap())
        .collect()
}

/// The managed example's manifests (`examples/managed/*.yaml`: a class whose control plane is
/// simcloud's managed service, and one Cluster) with simcloud's address replaced by
/// `simcloud_url`, as the JSON objects `capw apply` stores.
pub fn managed_objects(simcloud_url: &str) -> Vec<serde_json::Value> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/managed");
    let text: String = yaml_files(&dir)
        .iter()
        .map(|f| std::fs::read_to_string(f).unwrap() + "\n---\n")
        .collect();
    let text = text.replace("http://127.0.0.1:7480", simcloud_url);
    capw_api::parse_manifests(&text)
        .unwrap()
        .iter()
        .map(|o| o.to_json().unwrap())
        .collect()
}

/// The first object of `kind` in `objects`, cloned.
///
/// # Panics
///
/// When there is none.
pub fn first_of_kind(objects: &[serde_json::Value], kind: &str) -> serde_json::Value {
    objects
        .iter()
        .find(|o| o["kind"] == kind)
        .unwrap_or_else(|| panic!("no {kind} in the manifests"))
        .clone()
}

/// An in-process simcloud that accepts `token` and takes `delay` for each step, with the
/// token granted in `secrets_dir` where the quickstart's sim-infra reads it
/// (`<secrets_dir>/simcloud/token`).
pub async fn simcloud_granted(
    secrets_dir: &std::path::Path,
    token: &str,
    delay: std::time::Duration,
) -> capw_simcloud::SimCloudHandle {
    std::fs::create_dir_all(secrets_dir.join("simcloud")).unwrap();
    std::fs::write(secrets_dir.join("simcloud/token"), token).unwrap();
    let config = capw_simcloud::SimCloudConfig::new(token)
        .with_timings(capw_simcloud::Timings::uniform(delay));
    capw_simcloud::SimCloud::start(config)
        .await
        .expect("simcloud starts")
}

/// The `.yaml` files of `dir`, in name order.
pub fn yaml_files(dir: &std::path::Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    files
}

/// The condition of `type_` in an object's `status.conditions`, or `null`.
pub fn condition<'a>(object: &'a serde_json::Value, type_: &str) -> &'a serde_json::Value {
    object["status"]["conditions"]
        .as_array()
        .and_then(|cs| cs.iter().find(|c| c["type"] == type_))
        .unwrap_or(&serde_json::Value::Null)
}

/// Runs `command` and gives its standard output; panics naming `what` with its standard
/// error when it cannot start or fails.
pub fn output_ok(command: &mut std::process::Command, what: &str) -> Vec<u8> {
    let out = command
        .output()
        .unwrap_or_else(|e| panic!("running {what}: {e}"));
    assert!(
        out.status.success(),
        "{what}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// Every string in `value`, each with where it is: `at` followed by the fields' names and
/// the lists' indexes that lead to it (`at.status.conditions[0].message`).
pub fn strings_in(value: &serde_json::Value, at: &str) -> Vec<(String, String)> {
    fn walk(value: &serde_json::Value, at: String, out: &mut Vec<(String, String)>) {
        match value {
            serde_json::Value::String(s) => out.push((at, s.clone())),
            serde_json::Value::Array(items) => {
                for (i, v) in items.iter().enumerate() {
                    walk(v, format!("{at}[{i}]"), out);
                }
            }
            serde_json::Value::Object(fields) => {
                for (k, v) in fields {
                    walk(v, format!("{at}.{k}"), out);
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(value, at.to_owned(), &mut out);
    out
}
