//! Every sandbox promise, broken on purpose by the hostile provider: each misbehaviour ends
//! in its own kind of failure within its deadline, the host stays up, and a healthy call
//! right after still succeeds.

use std::io::Read;
use std::net::TcpListener;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use capw_runtime::infrastructure::ClusterState;
use capw_runtime::types::ErrorCode;
use capw_runtime::{
    CallError, CallFailure, Capability, Grants, HttpGrant, Limits, Provider, Runtime, Secret,
};
use serde_json::{Value, json};

use crate::support::{ctx, hostile, runtime};

const TIMEOUT: Duration = Duration::from_millis(500);

fn grants() -> Grants {
    Grants {
        limits: Limits {
            call_timeout: TIMEOUT,
            memory: 64 << 20,
        },
        ..Grants::default()
    }
}

async fn misbehave(p: &Provider, behaviour: Value) -> CallError {
    p.reconcile_cluster(&ctx("evil", behaviour))
        .await
        .expect_err("a hostile call must fail")
}

/// The provider (and the host) still answer a healthy call.
async fn still_healthy(p: &Provider) {
    let state = p
        .reconcile_cluster(&ctx("ok", json!({"behaviour": "healthy"})))
        .await
        .unwrap();
    let ClusterState::Ready(infra) = state else {
        panic!("expected ready, got {state:?}");
    };
    assert_eq!(
        infra.control_plane_endpoint.as_ref().unwrap().host,
        "healthy.test"
    );
}

async fn setup(grants: Grants) -> (Arc<Runtime>, Provider) {
    let rt = runtime();
    let p = hostile(&rt, grants).await;
    (rt, p)
}

#[tokio::test]
async fn an_endless_loop_ends_at_its_deadline() {
    let (rt, p) = setup(grants()).await;
    let started = Instant::now();
    let err = misbehave(&p, json!({"behaviour": "loop"})).await;
    let elapsed = started.elapsed();
    assert!(
        matches!(err.failure(), CallFailure::DeadlineExceeded { timeout } if *timeout == TIMEOUT),
        "{err:?}"
    );
    assert_eq!(err.failure().reason(), "DeadlineExceeded");
    assert!(elapsed >= TIMEOUT, "stopped early: {elapsed:?}");
    // Timeout plus one epoch tick, plus scheduling slack for a loaded 2-core machine.
    let bound = TIMEOUT + rt.pool().epoch_tick + Duration::from_millis(400);
    assert!(elapsed <= bound, "took {elapsed:?}, over {bound:?}");
    still_healthy(&p).await;
}

/// The epoch deadline stops running wasm only; a guest waiting in the host (here a 30 s
/// sleep) is stopped by the call's timer, armed when the call first waits.
#[tokio::test]
async fn waiting_in_the_host_ends_at_the_deadline() {
    let (_rt, p) = setup(grants()).await;
    let started = Instant::now();
    let err = misbehave(&p, json!({"behaviour": "sleep", "millis": 30_000})).await;
    let elapsed = started.elapsed();
    assert!(
        matches!(err.failure(), CallFailure::DeadlineExceeded { timeout } if *timeout == TIMEOUT),
        "{err:?}"
    );
    assert!(elapsed >= TIMEOUT, "stopped early: {elapsed:?}");
    let bound = TIMEOUT + Duration::from_millis(400);
    assert!(elapsed <= bound, "took {elapsed:?}, over {bound:?}");
    still_healthy(&p).await;
}

#[tokio::test]
async fn unbounded_memory_growth_hits_the_memory_limit() {
    let (_rt, p) = setup(grants()).await;
    let err = misbehave(&p, json!({"behaviour": "grow-memory"})).await;
    assert!(
        matches!(err.failure(), CallFailure::MemoryLimitExceeded { limit } if *limit == 64 << 20),
        "{err:?}"
    );
    still_healthy(&p).await;
}

#[tokio::test]
async fn unbounded_recursion_overflows_the_stack() {
    let (_rt, p) = setup(grants()).await;
    let err = misbehave(&p, json!({"behaviour": "recurse"})).await;
    assert!(
        matches!(err.failure(), CallFailure::StackOverflow),
        "{err:?}"
    );
    still_healthy(&p).await;
}

#[tokio::test]
async fn a_panic_is_a_trap() {
    let (_rt, p) = setup(grants()).await;
    let err = misbehave(&p, json!({"behaviour": "panic"})).await;
    let CallFailure::Trap { message, .. } = err.failure() else {
        panic!("expected a trap, got {err:?}");
    };
    assert!(message.contains("unreachable"), "{message}");
    still_healthy(&p).await;
}

#[tokio::test]
async fn a_huge_answer_is_refused() {
    // With room to build it, the answer is refused for its size...
    let mut roomy = grants();
    roomy.limits.memory = 1 << 30;
    roomy.limits.call_timeout = Duration::from_secs(30);
    let (_rt, p) = setup(roomy).await;
    let err = misbehave(&p, json!({"behaviour": "huge-result", "megabytes": 300})).await;
    assert!(
        matches!(err.failure(), CallFailure::ResultTooLarge { limit } if *limit < 300 << 20),
        "{err:?}"
    );
    still_healthy(&p).await;

    // ...and within the default limits it cannot even be built.
    let (_rt, p) = setup(grants()).await;
    let err = misbehave(&p, json!({"behaviour": "huge-result", "megabytes": 300})).await;
    assert!(
        matches!(err.failure(), CallFailure::MemoryLimitExceeded { .. }),
        "{err:?}"
    );
}

#[tokio::test]
async fn host_files_are_out_of_reach() {
    let dir = tempfile::tempdir().unwrap();
    let canary = dir.path().join("canary.txt");
    std::fs::write(&canary, "canary-content-1f2e").unwrap();
    let (_rt, p) = setup(grants()).await;
    for path in [
        canary.to_str().unwrap(),
        "/etc/passwd",
        "../../../../etc/passwd",
    ] {
        let err = misbehave(&p, json!({"behaviour": "read-file", "path": path})).await;
        let e = err.provider_error().unwrap_or_else(|| panic!("{err:?}"));
        assert_eq!(e.code, ErrorCode::Internal);
        assert!(!e.message.contains("canary-content"), "{}", e.message);
        assert!(!e.message.contains("root:"), "{}", e.message);
    }
    still_healthy(&p).await;
}

/// A loopback listener that counts the connections it accepts.
fn counting_listener() -> (std::net::SocketAddr, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let accepted = Arc::new(AtomicUsize::new(0));
    let counter = accepted.clone();
    std::thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            counter.fetch_add(1, Ordering::SeqCst);
            let mut buf = [0u8; 4096];
            let _ = stream.read(&mut buf);
            let _ = std::io::Write::write_all(
                &mut stream,
                b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok",
            );
        }
    });
    (addr, accepted)
}

#[tokio::test]
async fn sockets_are_refused_and_nothing_connects() {
    let (addr, accepted) = counting_listener();
    let (_rt, p) = setup(grants()).await;
    let err = misbehave(
        &p,
        json!({"behaviour": "open-socket", "address": addr.to_string()}),
    )
    .await;
    let CallFailure::Denied { denial, .. } = err.failure() else {
        panic!("expected a denial, got {err:?}");
    };
    assert_eq!(denial.capability, Capability::Socket);
    assert_eq!(accepted.load(Ordering::SeqCst), 0);
    still_healthy(&p).await;
}

#[tokio::test]
async fn http_goes_only_to_granted_hosts() {
    let (addr, accepted) = counting_listener();
    let url = format!("http://{addr}/v1/ping");

    let (_rt, denied) = setup(grants()).await;
    let err = misbehave(&denied, json!({"behaviour": "http", "url": url})).await;
    let CallFailure::Denied { denial, outcome } = err.failure() else {
        panic!("expected a denial, got {err:?}");
    };
    assert_eq!(denial.capability, Capability::Http);
    assert_eq!(denial.target, format!("http://{addr}"));
    let message = &outcome.provider_error().unwrap().message;
    assert!(
        message.contains("denied"),
        "the guest must see the denial: {message}"
    );
    assert_eq!(
        accepted.load(Ordering::SeqCst),
        0,
        "a denied request reached the server"
    );
    still_healthy(&denied).await;

    // Another port on the same host is another authority.
    let mut other_port = grants();
    other_port.http = vec![
        format!("http://127.0.0.1:{}", addr.port() + 1)
            .parse()
            .unwrap(),
    ];
    let (_rt, p) = setup(other_port).await;
    let err = misbehave(&p, json!({"behaviour": "http", "url": url})).await;
    assert!(
        matches!(err.failure(), CallFailure::Denied { .. }),
        "{err:?}"
    );
    assert_eq!(accepted.load(Ordering::SeqCst), 0);

    let mut granted = grants();
    granted.http = vec![format!("http://{addr}").parse::<HttpGrant>().unwrap()];
    let (_rt, p) = setup(granted).await;
    let state = p
        .reconcile_cluster(&ctx("ok", json!({"behaviour": "http", "url": url})))
        .await
        .unwrap();
    let ClusterState::Ready(infra) = state else {
        panic!("{state:?}");
    };
    assert_eq!(
        infra.control_plane_endpoint.as_ref().unwrap().host,
        "status 200"
    );
    assert_eq!(accepted.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn secrets_only_those_granted() {
    let mut g = grants();
    g.secrets
        .insert("api-token".into(), Some(Secret::new("tok-123456789")));
    g.secrets.insert("missing".into(), None);
    let (_rt, p) = setup(g).await;

    let err = misbehave(&p, json!({"behaviour": "secret", "name": "root-ca-key"})).await;
    let CallFailure::Denied { denial, .. } = err.failure() else {
        panic!("expected a denial, got {err:?}");
    };
    assert_eq!(denial.capability, Capability::Secret);
    assert_eq!(denial.target, "root-ca-key");

    let err = misbehave(&p, json!({"behaviour": "secret", "name": "missing"})).await;
    assert!(matches!(err.failure(), CallFailure::Provider(_)), "{err:?}");
    assert!(err.to_string().contains("NotFound"), "{err}");

    let state = p
        .reconcile_cluster(&ctx(
            "ok",
            json!({"behaviour": "secret", "name": "api-token"}),
        ))
        .await
        .unwrap();
    let ClusterState::Ready(infra) = state else {
        panic!("{state:?}");
    };
    assert_eq!(
        infra.control_plane_endpoint.as_ref().unwrap().host,
        "tok-123456789"
    );
}

/// The log lines the runtime writes while `f` runs on this thread.
#[derive(Clone, Default)]
struct Logs(Arc<std::sync::Mutex<Vec<u8>>>);

impl std::io::Write for Logs {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Logs {
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }
}

#[tokio::test]
async fn a_flood_of_output_is_bounded_and_harmless() {
    let mut g = grants();
    g.limits.call_timeout = Duration::from_secs(10);
    let (_rt, p) = setup(g).await;
    let logs = Logs::default();
    let writer = logs.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_ansi(false)
        .with_max_level(tracing::Level::INFO)
        .with_writer(move || writer.clone())
        .finish();
    {
        // A current-thread test: the call and its logging run on this thread.
        let _guard = tracing::subscriber::set_default(subscriber);
        // 20,000 lines of 101 bytes: about 2 MB, against 64 KiB kept of each stream.
        p.reconcile_cluster(&ctx(
            "ok",
            json!({"behaviour": "stdout-flood", "lines": 20_000}),
        ))
        .await
        .unwrap();
    }
    let text = logs.text();
    let line = "x".repeat(100);
    let kept = text.lines().filter(|l| l.contains(&line)).count();
    assert!(kept > 0, "the output was not logged at all");
    assert!(
        kept <= (64 << 10) / 101,
        "{kept} lines of output logged, more than 64 KiB"
    );
    let dropped = text
        .lines()
        .find(|l| l.contains("provider output over the limit was dropped"))
        .unwrap_or_else(|| panic!("no line says output was dropped"));
    let count: usize = dropped
        .split("dropped=")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{dropped}"));
    // Exactly 64 KiB kept, the rest counted.
    assert_eq!(count, 20_000 * 101 - (64 << 10), "{dropped}");
    still_healthy(&p).await;
}

#[tokio::test]
async fn a_bad_config_never_reaches_behaviour() {
    let (_rt, p) = setup(grants()).await;
    let err = misbehave(&p, json!({"behaviour": "format-the-disk"})).await;
    assert_eq!(err.provider_error().unwrap().code, ErrorCode::InvalidInput);
}
