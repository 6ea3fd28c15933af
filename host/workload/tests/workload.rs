//! The ClusterCache against real kube-apiservers standing in for workload clusters, and a
//! silent listener standing in for a hung one.

use std::time::{Duration, Instant};

use capw_test_support::kube::KubeEnv;
use capw_workload::{
    ApiAvailability, ClusterCache, ClusterCacheConfig, ClusterCacheError, ClusterId, ReadyStatus,
    WorkloadObservation,
};
use k8s_openapi::api::core::v1::Node;
use kube::api::{Api, Patch, PatchParams, PostParams};
use serde_json::json;

use capw_test_support::silent::SilentListener;

fn id(name: &str) -> ClusterId {
    ClusterId {
        namespace: "default".into(),
        name: name.into(),
        uid: format!("uid-{name}"),
    }
}

fn kubeconfig(env: &KubeEnv) -> Vec<u8> {
    std::fs::read(env.kubeconfig()).unwrap()
}

/// A self-signed CA certificate (PEM, in base64) for kubeconfigs of plain-HTTP servers. No
/// connection is verified with it; without one, kube builds its TLS configuration from the
/// operating system's trust store, which a test should not need.
const UNUSED_CA: &str = concat!(
    "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUJvVENDQVVlZ0F3SUJBZ0lVRGtHTHBpRUV4Y09XRCtIOGQ0",
    "a0ZWWjgySjZJd0NnWUlLb1pJemowRUF3SXcKSlRFak1DRUdBMVVFQXd3YWMybHNaVzUwTFd4cGMzUmxibVZ5TFda",
    "cGVIUjFjbVV0WTJFd0lCY05Nall4TWpBeQpNRGN3TVRVNFdoZ1BNakV5TmpFeE1EZ3dOekF4TlRoYU1DVXhJekFo",
    "QmdOVkJBTU1Hbk5wYkdWdWRDMXNhWE4wClpXNWxjaTFtYVhoMGRYSmxMV05oTUZrd0V3WUhLb1pJemowQ0FRWUlL",
    "b1pJemowREFRY0RRZ0FFRkVhRTJzTXAKOHFQUW9HMithRStVbXREeW1CSjIzYjdTQ3RYcW0xcUFybkdFY3JYallj",
    "emlEQlRJQm9RcEdZZ05NWHBnQ3I0cwp4VFhodmRManVCWnFNYU5UTUZFd0hRWURWUjBPQkJZRUZBdTRPVEE5cXIz",
    "bXpxMVAyNkxtWEJ1Z3RmenNNQjhHCkExVWRJd1FZTUJhQUZBdTRPVEE5cXIzbXpxMVAyNkxtWEJ1Z3RmenNNQThH",
    "QTFVZEV3RUIvd1FGTUFNQkFmOHcKQ2dZSUtvWkl6ajBFQXdJRFNBQXdSUUlnWXM0anh1Z3F0YTZDUmlybHRNOU5P",
    "UEF6NERSUFE2czdyQ3FnazlRTAp4UTRDSVFEOHUwcGJabXlYdlUrZTZnUU81VmNMdE9SQS8rU3VzMFZkZzBpYkxE",
    "ZHNodz09Ci0tLS0tRU5EIENFUlRJRklDQVRFLS0tLS0K",
);

/// A kubeconfig for the API at `server` (a URL), with no credentials.
fn kubeconfig_for(server: &str) -> Vec<u8> {
    format!(
        "apiVersion: v1
kind: Config
clusters:
- name: workload
  cluster:
    server: {server}
    certificate-authority-data: {UNUSED_CA}
contexts:
- name: workload
  context:
    cluster: workload
current-context: workload
"
    )
    .into_bytes()
}

/// Creates Node `name` with `provider_id`, its Ready condition `ready`.
async fn create_node(env: &KubeEnv, name: &str, provider_id: &str, ready: &str) {
    let api: Api<Node> = Api::all(env.client().await);
    let node: Node = serde_json::from_value(json!({
        "metadata": {"name": name},
        "spec": {"providerID": provider_id},
    }))
    .unwrap();
    api.create(&PostParams::default(), &node).await.unwrap();
    set_ready(
        env,
        name,
        ready,
        "KubeletReady",
        "kubelet is posting ready status",
    )
    .await;
}

async fn set_ready(env: &KubeEnv, name: &str, status: &str, reason: &str, message: &str) {
    let api: Api<Node> = Api::all(env.client().await);
    let patch = json!({"status": {"conditions": [{
        "type": "Ready", "status": status, "reason": reason, "message": message,
        "lastHeartbeatTime": "2026-01-01T00:00:00Z", "lastTransitionTime": "2026-01-01T00:00:00Z",
    }]}});
    api.patch_status(name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .unwrap();
}

/// Observes until `check` holds, for at most 20 s.
async fn observe_until(
    cache: &ClusterCache,
    cluster: &ClusterId,
    kubeconfig: &[u8],
    check: impl Fn(&WorkloadObservation) -> bool,
) -> WorkloadObservation {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let o = cache.observe(cluster, kubeconfig).await.unwrap();
        if check(&o) {
            return o;
        }
        assert!(Instant::now() < deadline, "never held; last: {o:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn ready_of(o: &WorkloadObservation, node: &str) -> Option<ReadyStatus> {
    o.nodes
        .as_ref()?
        .iter()
        .find(|n| n.name == node)?
        .ready
        .as_ref()
        .map(|r| r.status)
}

/// The names of the Nodes `o` shows; none before the watch's first list.
fn node_names(o: &WorkloadObservation) -> Vec<&str> {
    o.nodes.iter().flatten().map(|n| n.name.as_str()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nodes_are_watched_with_provider_ids_and_ready_follows_the_node() {
    capw_test_support::init_tracing();
    let env = KubeEnv::start();
    let kubeconfig = kubeconfig(&env);
    create_node(&env, "node-a", "simcloud://r/a", "True").await;
    let cache = ClusterCache::new(ClusterCacheConfig::default());
    let cluster = id("alpha");

    let o = observe_until(&cache, &cluster, &kubeconfig, |o| {
        ready_of(o, "node-a") == Some(ReadyStatus::True)
    })
    .await;
    assert_eq!(o.api, ApiAvailability::Available);
    let node = &o.nodes.as_ref().unwrap()[0];
    assert_eq!(node.provider_id.as_deref(), Some("simcloud://r/a"));
    assert_eq!(node.ready.as_ref().unwrap().reason, "KubeletReady");

    set_ready(
        &env,
        "node-a",
        "False",
        "KubeletNotReady",
        "PLEG is not healthy\nat all",
    )
    .await;
    let o = observe_until(&cache, &cluster, &kubeconfig, |o| {
        ready_of(o, "node-a") == Some(ReadyStatus::False)
    })
    .await;
    let ready = o.nodes.unwrap()[0].ready.clone().unwrap();
    assert_eq!(ready.reason, "KubeletNotReady");
    assert_eq!(ready.message, "PLEG is not healthy at all", "one line");

    set_ready(&env, "node-a", "True", "KubeletReady", "back").await;
    observe_until(&cache, &cluster, &kubeconfig, |o| {
        ready_of(o, "node-a") == Some(ReadyStatus::True)
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopped_api_is_unreachable_at_once_and_holds_up_no_other_cluster() {
    capw_test_support::init_tracing();
    let (down, up) = (KubeEnv::start(), KubeEnv::start());
    let (down_config, up_config) = (kubeconfig(&down), kubeconfig(&up));
    let cache = ClusterCache::new(ClusterCacheConfig::default());
    let (a, b) = (id("down"), id("up"));
    let o = cache.observe(&a, &down_config).await.unwrap();
    assert_eq!(o.api, ApiAvailability::Available);
    assert!(
        o.nodes.is_some(),
        "the first list came within the sync timeout"
    );
    cache.observe(&b, &up_config).await.unwrap();
    let server = o.server.clone();

    drop(down);
    let started = Instant::now();
    let (o_down, o_up) = tokio::join!(cache.observe(&a, &down_config), async {
        let started = Instant::now();
        let o = cache.observe(&b, &up_config).await.unwrap();
        (o, started.elapsed())
    });
    let o_down = o_down.unwrap();
    let (o_up, up_took) = o_up;
    let bound = cache.config().probe_timeout + Duration::from_millis(500);
    assert!(started.elapsed() < bound, "took {:?}", started.elapsed());
    let ApiAvailability::Unreachable { error } = &o_down.api else {
        panic!("still available: {o_down:?}");
    };
    assert!(!error.is_empty());
    assert_eq!(o_down.server, server);
    assert!(o_down.nodes.is_none(), "no stale nodes from a dead API");
    let first_retry = o_down.retry_after.unwrap();
    assert_eq!(o_up.api, ApiAvailability::Available);
    assert!(
        up_took < Duration::from_secs(1),
        "the other cluster took {up_took:?}"
    );

    let again = cache.observe(&a, &down_config).await.unwrap();
    assert!(
        again.retry_after.unwrap() > first_retry,
        "the retry hint grows"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_api_that_accepts_and_never_answers_is_unreachable_after_the_probe_timeout() {
    capw_test_support::init_tracing();
    let silent = SilentListener::start(Duration::from_secs(60))
        .await
        .unwrap();
    // Plain HTTP: the connection completes at once, so the wait is on the answer to
    // `/readyz`, where only the probe's own deadline applies (kube sets no read timeout).
    let kubeconfig = kubeconfig_for(&format!("http://{}", silent.addr()));
    let probe_timeout = Duration::from_millis(500);
    let cache = ClusterCache::new(ClusterCacheConfig {
        probe_timeout,
        ..ClusterCacheConfig::default()
    });

    let started = Instant::now();
    // Only a guard, so that a probe without a deadline fails the test instead of hanging it.
    let observed = tokio::time::timeout(
        probe_timeout + Duration::from_secs(10),
        cache.observe(&id("silent"), &kubeconfig),
    )
    .await;
    let took = started.elapsed();
    let o = observed
        .unwrap_or_else(|_| panic!("the probe of a silent API never returned ({took:?})"))
        .unwrap();

    let ApiAvailability::Unreachable { error } = &o.api else {
        panic!("a silent API is available: {o:?}");
    };
    assert_eq!(
        *error,
        format!("no answer within {probe_timeout:?}"),
        "not the probe's timeout"
    );
    assert!(
        took >= probe_timeout,
        "gave up after {took:?}, before the probe timeout"
    );
    assert!(
        took < probe_timeout + Duration::from_secs(2),
        "took {took:?} for a probe timeout of {probe_timeout:?}"
    );
    assert!(o.nodes.is_none());
    assert!(o.retry_after.is_some());
    assert!(
        silent.accepted() > 0,
        "nothing connected: the timeout says nothing of a silent API"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clients_are_bounded_rebuilt_on_a_new_kubeconfig_and_evicted() {
    capw_test_support::init_tracing();
    // Two API servers a cluster's kubeconfig may name, told apart by the Node each holds.
    let (first, second) = (KubeEnv::start(), KubeEnv::start());
    create_node(&first, "node-of-first", "simcloud://r/first", "True").await;
    create_node(&second, "node-of-second", "simcloud://r/second", "True").await;
    let (kubeconfig, second_kubeconfig) = (kubeconfig(&first), kubeconfig(&second));
    let cache = ClusterCache::new(ClusterCacheConfig {
        max_clusters: 2,
        ..ClusterCacheConfig::default()
    });
    for name in ["one", "two", "three"] {
        let o = cache.observe(&id(name), &kubeconfig).await.unwrap();
        assert_eq!(o.api, ApiAvailability::Available);
    }
    assert_eq!(cache.clusters(), vec![id("three"), id("two")]);
    let before = observe_until(&cache, &id("two"), &kubeconfig, |o| {
        node_names(o) == ["node-of-first"]
    })
    .await;

    // A rotated kubeconfig (same cluster, another server) gives a working client of the new
    // server: a client kept for the cluster alone would still answer for the first.
    let o = cache.observe(&id("two"), &second_kubeconfig).await.unwrap();
    assert_eq!(o.api, ApiAvailability::Available);
    assert_ne!(
        o.server, before.server,
        "the client of the old kubeconfig answered: {o:?}"
    );
    observe_until(&cache, &id("two"), &second_kubeconfig, |o| {
        node_names(o) == ["node-of-second"]
    })
    .await;

    cache.evict(&id("two"));
    cache.evict_named("default", "three");
    assert!(cache.clusters().is_empty());
}

#[tokio::test]
async fn a_malformed_kubeconfig_is_an_error_that_quotes_none_of_it() {
    let cache = ClusterCache::new(ClusterCacheConfig::default());
    let secret = b"users: [{name: admin, user: {token: s3cr3t-t0ken}}]: [";
    let err = cache.observe(&id("bad"), secret).await.unwrap_err();
    assert!(matches!(err, ClusterCacheError::MalformedKubeconfig));
    let text = capw_text::error_chain(&err);
    assert!(!text.contains("s3cr3t"), "{text}");
    assert!(cache.clusters().is_empty());
}

/// How long a heartbeat must go unannounced. A debounce delays an announcement without
/// dropping it; this outlasts any debounce worth having (one of several seconds would lose to
/// the requeue the announcements exist to beat), and keeps the test short.
const HEARTBEAT_SILENCE: Duration = Duration::from_secs(5);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn node_changes_announce_what_an_observation_shows_and_not_heartbeats() {
    capw_test_support::init_tracing();
    let env = KubeEnv::start();
    let kubeconfig = kubeconfig(&env);
    create_node(&env, "node-a", "simcloud://r/a", "True").await;
    let cache = ClusterCache::new(ClusterCacheConfig::default());
    let cluster = id("alpha");
    let mut changes = cache.node_changes();
    observe_until(&cache, &cluster, &kubeconfig, |o| {
        ready_of(o, "node-a") == Some(ReadyStatus::True)
    })
    .await;
    // The first list is announced; drain what came of it.
    let first = tokio::time::timeout(Duration::from_secs(5), changes.recv()).await;
    assert_eq!(first.unwrap().unwrap(), cluster);
    tokio::time::sleep(Duration::from_millis(500)).await;
    while changes.try_recv().is_ok() {}

    // A heartbeat changes nothing an observation shows: no announcement.
    let api: Api<Node> = Api::all(env.client().await);
    let heartbeat = json!({"status": {"conditions": [{
        "type": "Ready", "status": "True", "reason": "KubeletReady",
        "message": "kubelet is posting ready status",
        "lastHeartbeatTime": "2026-01-01T00:00:10Z", "lastTransitionTime": "2026-01-01T00:00:00Z",
    }]}});
    api.patch_status("node-a", &PatchParams::default(), &Patch::Merge(&heartbeat))
        .await
        .unwrap();
    // Announced late is announced all the same: listen past any debounce that could hold it.
    let quiet = tokio::time::timeout(HEARTBEAT_SILENCE, changes.recv()).await;
    assert!(
        quiet.is_err(),
        "a heartbeat was announced within {HEARTBEAT_SILENCE:?}: {quiet:?}"
    );

    // A flip of Ready is, at once, for this cluster. It also makes the silence above count:
    // the watch delivers the Node's updates in order, so it had taken in the heartbeat
    // before this, and the flip's is the first announcement since the heartbeat.
    let flipped = Instant::now();
    set_ready(&env, "node-a", "False", "KubeletNotReady", "down").await;
    let flip = tokio::time::timeout(Duration::from_secs(5), changes.recv()).await;
    assert_eq!(flip.unwrap().unwrap(), cluster);
    assert!(flipped.elapsed() < Duration::from_secs(5));
    let o = cache.observe(&cluster, &kubeconfig).await.unwrap();
    assert_eq!(ready_of(&o, "node-a"), Some(ReadyStatus::False));

    // A Node that goes is announced too.
    api.delete("node-a", &Default::default()).await.unwrap();
    let gone = tokio::time::timeout(Duration::from_secs(5), changes.recv()).await;
    assert_eq!(gone.unwrap().unwrap(), cluster);
}
