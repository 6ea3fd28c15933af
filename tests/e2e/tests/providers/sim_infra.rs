//! sim-infra, built and loaded in capw's runtime, driven against an in-process simcloud.

use std::time::{Duration, Instant};

use capw_runtime::infrastructure::{ClusterState, MachinePhase, MachineSpec, MachineStatus};
use capw_runtime::types::{
    Deletion, ErrorCode, KubernetesVersion, MachineRef, MachineRole, ProviderError,
};
use capw_runtime::{CallError, CallFailure, Capability, HttpGrant, Provider, Secret};
use capw_simcloud::model::{Inventory, LoadBalancer, Network};
use capw_simcloud::{FaultConfig, SimCloudHandle, fixtures};
use serde_json::{Value, json};

use crate::support::{self, SIM_TOKEN, TOKEN_SECRET, ctx};

/// Simcloud's delay for every transition in these tests.
const DELAY: Duration = Duration::from_millis(50);

/// How long a test waits for a state simcloud reaches after a few delays.
const PATIENCE: Duration = Duration::from_secs(10);

fn config(sim: &SimCloudHandle) -> Value {
    json!({ "endpoint": sim.base_url() })
}

fn spec(name: &str, role: MachineRole, zone: Option<&str>, data: &str) -> MachineSpec {
    MachineSpec {
        machine: MachineRef {
            name: name.into(),
            uid: format!("uid-{name}"),
        },
        role,
        pool: match role {
            MachineRole::Worker => "md-0".into(),
            _ => "control-plane".into(),
        },
        version: KubernetesVersion {
            major: 1,
            minor: 35,
            patch: 0,
        },
        failure_domain: zone.map(str::to_owned),
        bootstrap_data: data.as_bytes().to_vec(),
    }
}

fn machine_ref(name: &str) -> MachineRef {
    MachineRef {
        name: name.into(),
        uid: format!("uid-{name}"),
    }
}

/// simcloud's API, for what a test sets up or checks behind the provider's back.
struct SimApi {
    base: String,
    http: reqwest::Client,
}

impl SimApi {
    fn new(sim: &SimCloudHandle) -> Self {
        Self {
            base: sim.base_url(),
            http: capw_test_support::http(),
        }
    }

    async fn send<T: serde::de::DeserializeOwned>(&self, request: reqwest::RequestBuilder) -> T {
        let response = request.bearer_auth(SIM_TOKEN).send().await.unwrap();
        let status = response.status();
        assert!(
            status.is_success(),
            "{status}: {}",
            response.text().await.unwrap()
        );
        response.json().await.unwrap()
    }

    /// What simcloud holds for `cluster`.
    async fn inventory(&self, cluster: &str) -> capw_simcloud::model::ClusterInventory {
        let url = format!("{}/v1/inventory", self.base);
        let inventory: Inventory = self
            .send(self.http.get(url).query(&[("cluster", cluster)]))
            .await;
        inventory.clusters.get(cluster).cloned().unwrap_or_default()
    }

    /// Registers the fixtures' bootstrap token and CA hash, so that fixture data boots.
    async fn register_bootstrap(&self, cluster: &str) {
        let url = format!("{}/v1/clusters/{cluster}/bootstrap", self.base);
        let body = json!({"token": fixtures::TOKEN, "ca_cert_hash": fixtures::CA_HASH});
        let _: Value = self.send(self.http.put(url).json(&body)).await;
    }

    async fn create_network(&self, cluster: &str, token: &str) -> Network {
        let url = format!("{}/v1/networks", self.base);
        let body = json!({"cluster": cluster, "name": "by-hand", "client_token": token});
        self.send(self.http.post(url).json(&body)).await
    }

    async fn create_load_balancer(&self, cluster: &str, token: &str) -> LoadBalancer {
        let url = format!("{}/v1/load-balancers", self.base);
        let body = json!({"cluster": cluster, "name": "by-hand", "client_token": token});
        self.send(self.http.post(url).json(&body)).await
    }
}

/// reconcile-cluster until it answers `ready`; returns the endpoint as `host:port` and the
/// failure domains.
async fn cluster_ready(p: &Provider, cluster: &str, config: &Value) -> (String, Vec<String>) {
    let started = Instant::now();
    loop {
        match p
            .reconcile_cluster(&ctx(cluster, config, "cluster-key"))
            .await
        {
            Ok(ClusterState::Ready(infra)) => {
                let endpoint = infra.control_plane_endpoint.as_ref().expect("an endpoint");
                let domains = infra.failure_domains.iter().map(|d| d.name.clone());
                return (
                    format!("{}:{}", endpoint.host, endpoint.port),
                    domains.collect(),
                );
            }
            Ok(ClusterState::InProgress(progress)) => {
                assert_eq!(progress.reason, "WaitingForLoadBalancer", "{progress:?}");
                assert!(progress.requeue_after_ms > 0);
            }
            Err(e) => panic!("reconcile-cluster: {e}"),
        }
        assert!(started.elapsed() < PATIENCE, "cluster never ready");
        tokio::time::sleep(DELAY).await;
    }
}

/// reconcile-machine until the machine is running or failed.
async fn machine_settled(
    p: &Provider,
    config: &Value,
    cluster: &str,
    key: &str,
    spec: &MachineSpec,
) -> MachineStatus {
    let started = Instant::now();
    loop {
        let status = p
            .reconcile_machine(&ctx(cluster, config, key), spec)
            .await
            .unwrap_or_else(|e| panic!("reconcile-machine {key}: {e}"));
        match status.phase {
            MachinePhase::Running | MachinePhase::Failed => {
                assert_eq!(status.requeue_after_ms, None, "{status:?}");
                return status;
            }
            _ => assert!(status.requeue_after_ms.is_some(), "{status:?}"),
        }
        assert!(started.elapsed() < PATIENCE, "machine {key} never settled");
        tokio::time::sleep(DELAY).await;
    }
}

fn provider_error(e: &CallError) -> &ProviderError {
    e.provider_error()
        .unwrap_or_else(|| panic!("expected a provider error, got {e:?}"))
}

#[tokio::test(flavor = "multi_thread")]
async fn builds_a_cluster_runs_machines_and_leaves_nothing_behind() {
    let sim = support::simcloud(DELAY, FaultConfig::default()).await;
    let api = SimApi::new(&sim);
    let runtime = support::runtime();
    let p = support::sim_infra(&runtime, &sim).await;
    let config = config(&sim);

    // The first answer waits for the load balancer; the endpoint is the load balancer's.
    let first = p
        .reconcile_cluster(&ctx("c1", &config, "cluster-key"))
        .await
        .unwrap();
    assert!(matches!(first, ClusterState::InProgress(_)), "{first:?}");
    let (endpoint, zones) = cluster_ready(&p, "c1", &config).await;
    assert!(
        endpoint.starts_with("lb-") && endpoint.ends_with(".sim:6443"),
        "{endpoint}"
    );
    assert_eq!(zones, ["zone-a", "zone-b", "zone-c"]);
    // Reconciling again (with another key, as after a host restart) adopts what exists.
    let again = p
        .reconcile_cluster(&ctx("c1", &config, "other-key"))
        .await
        .unwrap();
    let ClusterState::Ready(infra) = again else {
        panic!("{again:?}");
    };
    assert_eq!(
        format!(
            "{}:{}",
            infra.control_plane_endpoint.as_ref().unwrap().host,
            infra.control_plane_endpoint.as_ref().unwrap().port
        ),
        endpoint
    );
    let inventory = api.inventory("c1").await;
    assert_eq!(inventory.networks.len(), 1);
    assert_eq!(inventory.load_balancers.len(), 1);

    // An init machine with data that passes the boot check runs, where it was placed.
    api.register_bootstrap("c1").await;
    let init = spec(
        "c1-cp-0",
        MachineRole::Init,
        Some("zone-b"),
        &fixtures::init_cloud_config(&endpoint, fixtures::TOKEN),
    );
    let cp = machine_settled(&p, &config, "c1", "key-cp-0", &init).await;
    assert_eq!(cp.phase, MachinePhase::Running, "{}", cp.message);
    let provider_id = cp.provider_id.clone().unwrap();
    assert!(
        provider_id.starts_with("sim://instances/i-"),
        "{provider_id}"
    );
    assert_eq!(cp.failure_domain.as_deref(), Some("zone-b"));
    assert!(!cp.addresses.is_empty());

    // The same key again reports the same instance and creates nothing.
    let same = p
        .reconcile_machine(&ctx("c1", &config, "key-cp-0"), &init)
        .await
        .unwrap();
    assert_eq!(same.provider_id.as_deref(), Some(provider_id.as_str()));
    assert_eq!(api.inventory("c1").await.instances.len(), 1);

    // A worker whose data fails the boot check ends failed, saying why.
    let worker = spec("c1-md-0-a", MachineRole::Worker, None, "not cloud-init");
    let failed = machine_settled(&p, &config, "c1", "key-md-0-a", &worker).await;
    assert_eq!(failed.phase, MachinePhase::Failed);
    assert!(
        failed.message.starts_with("bootstrap:"),
        "{}",
        failed.message
    );
    assert_eq!(failed.failure_domain.as_deref(), Some("zone-a"));

    // list-machines sees both, by key and Machine name.
    let mut listed = p.list_machines(&ctx("c1", &config, "list")).await.unwrap();
    listed.sort_by(|a, b| a.idempotency_key.cmp(&b.idempotency_key));
    let summary: Vec<(&str, &str, MachinePhase)> = listed
        .iter()
        .map(|m| (m.idempotency_key.as_str(), m.machine_name.as_str(), m.phase))
        .collect();
    assert_eq!(
        summary,
        [
            ("key-cp-0", "c1-cp-0", MachinePhase::Running),
            ("key-md-0-a", "c1-md-0-a", MachinePhase::Failed),
        ]
    );
    assert_eq!(listed[0].provider_id, provider_id);

    // The network cannot go while instances are in it: delete-cluster waits.
    let early = p
        .delete_cluster(&ctx("c1", &config, "cluster-key"))
        .await
        .unwrap();
    let Deletion::InProgress(progress) = early else {
        panic!("{early:?}");
    };
    assert_eq!(progress.reason, "WaitingForInstances");

    // Deleting a machine twice answers deleted both times.
    for key in ["key-cp-0", "key-md-0-a", "key-cp-0", "key-never-created"] {
        let deleted = p
            .delete_machine(&ctx("c1", &config, key), &machine_ref("m"))
            .await
            .unwrap();
        assert_eq!(deleted, Deletion::Deleted, "{key}");
    }
    assert!(
        p.list_machines(&ctx("c1", &config, "list"))
            .await
            .unwrap()
            .is_empty()
    );

    // A late create with a deleted machine's key never brings it back.
    let late = p
        .reconcile_machine(&ctx("c1", &config, "key-cp-0"), &init)
        .await
        .unwrap();
    assert_eq!(late.phase, MachinePhase::Failed);
    assert!(late.message.contains("deleted"), "{}", late.message);
    assert!(api.inventory("c1").await.instances.is_empty());

    // delete-cluster leaves nothing behind, and answers deleted again.
    for _ in 0..2 {
        let deleted = p
            .delete_cluster(&ctx("c1", &config, "cluster-key"))
            .await
            .unwrap();
        assert_eq!(deleted, Deletion::Deleted);
    }
    let left = api.inventory("c1").await;
    assert!(
        left.networks.is_empty() && left.load_balancers.is_empty(),
        "{left:?}"
    );
    assert!(left.instances.is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn adopts_a_network_and_load_balancer_made_by_someone_else() {
    let sim = support::simcloud(DELAY, FaultConfig::default()).await;
    let api = SimApi::new(&sim);
    let network = api.create_network("c2", "by-hand-net").await;
    let lb = api.create_load_balancer("c2", "by-hand-lb").await;
    let runtime = support::runtime();
    let p = support::sim_infra(&runtime, &sim).await;
    let config = json!({ "endpoint": sim.base_url(), "zones": ["zone-c", "zone-a"] });

    let (endpoint, zones) = cluster_ready(&p, "c2", &config).await;
    assert_eq!(endpoint, lb.endpoint.to_string());
    assert_eq!(
        zones,
        ["zone-a", "zone-c"],
        "configured zones, in simcloud's order"
    );
    let inventory = api.inventory("c2").await;
    assert_eq!(inventory.networks, [network]);
    assert_eq!(inventory.load_balancers.len(), 1);

    // A zone simcloud does not have is a config error, not something to retry.
    let bad = json!({ "endpoint": sim.base_url(), "zones": ["zone-x"] });
    let err = p
        .reconcile_cluster(&ctx("c2", &bad, "k"))
        .await
        .unwrap_err();
    let e = provider_error(&err);
    assert_eq!(
        (e.code, e.retryable),
        (ErrorCode::InvalidInput, false),
        "{err}"
    );
    assert!(e.message.contains("`zone-x`"), "{}", e.message);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_missing_or_wrong_token_is_a_clear_error() {
    let sim = support::simcloud(DELAY, FaultConfig::default()).await;
    let runtime = support::runtime();
    let config = config(&sim);
    let call = ctx("c3", &config, "k");

    // Not granted: the sandbox refuses, and the provider says which grant it needed.
    let mut grants = support::sim_infra_grants(&sim);
    grants.secrets.clear();
    let p = runtime
        .load(
            "sim-infra-no-secret",
            support::component("capw_sim_infra"),
            grants,
        )
        .await
        .unwrap();
    let err = p.reconcile_cluster(&call).await.unwrap_err();
    let CallFailure::Denied { denial, .. } = err.failure() else {
        panic!("expected a denial, got {err:?}");
    };
    assert_eq!(denial.capability, Capability::Secret);
    assert_eq!(denial.target, TOKEN_SECRET);
    let e = provider_error(&err);
    assert_eq!(
        (e.code, e.retryable),
        (ErrorCode::NotGranted, false),
        "{err}"
    );
    assert!(e.message.contains("`simcloud-token`"), "{}", e.message);

    // Granted, but the Secret does not exist yet: retryable.
    let mut grants = support::sim_infra_grants(&sim);
    grants.secrets.insert(TOKEN_SECRET.into(), None);
    let p = runtime
        .load(
            "sim-infra-secret-missing",
            support::component("capw_sim_infra"),
            grants,
        )
        .await
        .unwrap();
    let err = p.reconcile_cluster(&call).await.unwrap_err();
    assert!(provider_error(&err).retryable, "{err}");

    // A wrong token: simcloud refuses it, for good, and the token never shows.
    let mut grants = support::sim_infra_grants(&sim);
    grants
        .secrets
        .insert(TOKEN_SECRET.into(), Some(Secret::new("wrong-token-1234")));
    let p = runtime
        .load(
            "sim-infra-wrong-token",
            support::component("capw_sim_infra"),
            grants,
        )
        .await
        .unwrap();
    let err = p.reconcile_cluster(&call).await.unwrap_err();
    let e = provider_error(&err);
    assert_eq!(
        (e.code, e.retryable),
        (ErrorCode::Unauthorized, false),
        "{err}"
    );
    assert!(e.message.contains("HTTP 401"), "{}", e.message);
    assert!(!e.message.contains("wrong-token-1234"), "{}", e.message);
}

#[tokio::test(flavor = "multi_thread")]
async fn an_ungranted_endpoint_is_denied() {
    let sim = support::simcloud(DELAY, FaultConfig::default()).await;
    let runtime = support::runtime();
    let mut grants = support::sim_infra_grants(&sim);
    // Granted: another port of the same host.
    let other = format!("127.0.0.1:{}", sim.addr().port().wrapping_add(1));
    grants.http = vec![other.parse::<HttpGrant>().unwrap()];
    let p = runtime
        .load(
            "sim-infra-no-http",
            support::component("capw_sim_infra"),
            grants,
        )
        .await
        .unwrap();
    let err = p
        .reconcile_cluster(&ctx("c4", &config(&sim), "k"))
        .await
        .unwrap_err();
    let CallFailure::Denied { denial, .. } = err.failure() else {
        panic!("expected a denial, got {err:?}");
    };
    assert_eq!(denial.capability, Capability::Http);
    let e = provider_error(&err);
    assert_eq!(
        (e.code, e.retryable),
        (ErrorCode::NotGranted, false),
        "{err}"
    );
    assert!(e.message.contains("denied"), "{}", e.message);
}

#[tokio::test(flavor = "multi_thread")]
async fn throttling_hands_retry_after_to_the_host() {
    let faults = FaultConfig {
        throttle_rate: 1.0,
        retry_after_secs: 2,
        ..FaultConfig::default()
    };
    let sim = support::simcloud(DELAY, faults).await;
    let runtime = support::runtime();
    let p = support::sim_infra(&runtime, &sim).await;
    let config = config(&sim);

    let err = p
        .reconcile_cluster(&ctx("c5", &config, "k"))
        .await
        .unwrap_err();
    let e = provider_error(&err);
    assert_eq!(e.code, ErrorCode::Unavailable, "{err}");
    assert!(e.retryable);
    assert_eq!(e.retry_after_ms, Some(2000));

    let err = p
        .reconcile_machine(
            &ctx("c5", &config, "m"),
            &spec("c5-md-0", MachineRole::Worker, None, "x"),
        )
        .await
        .unwrap_err();
    assert_eq!(provider_error(&err).retry_after_ms, Some(2000), "{err}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_hung_simcloud_times_out_before_the_call_deadline() {
    let faults = FaultConfig {
        hang_rate: 1.0,
        ..FaultConfig::default()
    };
    let sim = support::simcloud(DELAY, faults).await;
    let runtime = support::runtime();
    let p = support::sim_infra(&runtime, &sim).await;
    let config = json!({ "endpoint": sim.base_url(), "requestTimeoutMs": 300 });

    let started = Instant::now();
    let err = p
        .reconcile_cluster(&ctx("c6", &config, "k"))
        .await
        .unwrap_err();
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    let e = provider_error(&err);
    assert_eq!(
        (e.code, e.retryable),
        (ErrorCode::Unavailable, true),
        "{err}"
    );
    assert!(e.message.contains("timed out"), "{}", e.message);
}

#[tokio::test(flavor = "multi_thread")]
async fn validate_config_points_at_the_field() {
    let sim = support::simcloud(DELAY, FaultConfig::default()).await;
    let runtime = support::runtime();
    let p = support::sim_infra(&runtime, &sim).await;

    let ok = p.validate_config(&config(&sim).to_string()).await.unwrap();
    assert_eq!(ok, Ok(()));
    let bad = json!({"endpoint": "ftp://sim", "zones": ["a", "a"], "requestTimeoutMs": 0});
    let errors = p
        .validate_config(&bad.to_string())
        .await
        .unwrap()
        .unwrap_err();
    let paths: Vec<&str> = errors.iter().map(|e| e.path.as_str()).collect();
    assert_eq!(paths, ["/endpoint", "/zones/1", "/requestTimeoutMs"]);
}
