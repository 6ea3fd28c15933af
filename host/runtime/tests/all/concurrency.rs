//! Calls are async: a slow or busy provider never blocks the executor, and calls to
//! different providers and for different objects run side by side.

use std::sync::Arc;
use std::time::Duration;

use capw_runtime::infrastructure::ClusterState;
use capw_runtime::{CallFailure, Grants, Limits, PoolConfig, Runtime, RuntimeConfig};
use serde_json::json;

use crate::support::{ctx, example, hostile, init_tracing, runtime};

/// On a single-threaded executor, a provider spinning in an endless loop must still let
/// healthy calls of another provider run and finish before the loop's deadline.
#[tokio::test(flavor = "current_thread")]
async fn a_busy_guest_does_not_starve_others_on_one_thread() {
    let rt = runtime();
    let spinner = hostile(
        &rt,
        Grants {
            limits: Limits {
                call_timeout: Duration::from_secs(3),
                ..Limits::default()
            },
            ..Grants::default()
        },
    )
    .await;
    let healthy = example(&rt).await;

    let spin_ctx = ctx("spin", json!({"behaviour": "loop"}));
    let spin = spinner.reconcile_cluster(&spin_ctx);
    let others = async {
        for i in 0..20 {
            healthy
                .reconcile_cluster(&ctx(&format!("c{i}"), json!({"region": "local"})))
                .await
                .unwrap();
        }
    };
    tokio::pin!(spin);
    tokio::select! {
        biased;
        () = others => {}
        r = &mut spin => panic!("the loop finished before the healthy calls: {r:?}"),
    }
    let err = spin.await.unwrap_err();
    assert!(
        matches!(err.failure(), CallFailure::DeadlineExceeded { .. }),
        "{err:?}"
    );
}

/// A provider waiting on the host (a sleep) holds no thread: healthy calls go on meanwhile.
#[tokio::test(flavor = "current_thread")]
async fn a_sleeping_guest_does_not_block_others() {
    let rt = runtime();
    let sleeper = hostile(&rt, Grants::default()).await;
    let healthy = example(&rt).await;

    let sleep_ctx = ctx("slow", json!({"behaviour": "sleep", "millis": 2000}));
    let sleep = sleeper.reconcile_cluster(&sleep_ctx);
    tokio::pin!(sleep);
    let others = async {
        for i in 0..20 {
            healthy
                .reconcile_cluster(&ctx(&format!("c{i}"), json!({"region": "local"})))
                .await
                .unwrap();
        }
    };
    tokio::select! {
        biased;
        () = others => {}
        r = &mut sleep => panic!("the sleep finished before the healthy calls: {r:?}"),
    }
    sleep.await.unwrap();
}

/// Many calls to one provider at once, each in its own instance.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_calls_to_one_provider() {
    let rt = runtime();
    let p = std::sync::Arc::new(example(&rt).await);
    let mut tasks = Vec::new();
    for i in 0..64 {
        let p = p.clone();
        tasks.push(tokio::spawn(async move {
            p.reconcile_cluster(&ctx(&format!("c{i}"), json!({"region": "local"})))
                .await
        }));
    }
    // Each answer is its own call's: the endpoint names the cluster the call was about.
    for (i, t) in tasks.into_iter().enumerate() {
        let state = t.await.unwrap().unwrap();
        let ClusterState::Ready(infra) = state else {
            panic!("c{i}: {state:?}");
        };
        assert_eq!(
            infra.control_plane_endpoint.as_ref().unwrap().host,
            format!("c{i}.local.example.test")
        );
    }
}

/// A failing call (a trap) while others run concurrently leaves the others untouched: every
/// hostile call fails as a trap, not as some other kind, and every healthy call answers with
/// its own cluster's endpoint.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_trap_beside_healthy_calls() {
    let rt = runtime();
    let bad = Arc::new(hostile(&rt, Grants::default()).await);
    let good = Arc::new(example(&rt).await);
    let mut tasks = Vec::new();
    for i in 0..16 {
        let (bad, good) = (bad.clone(), good.clone());
        tasks.push(tokio::spawn(async move {
            if i % 2 == 0 {
                bad.reconcile_cluster(&ctx(&format!("bad-{i}"), json!({"behaviour": "panic"})))
                    .await
            } else {
                good.reconcile_cluster(&ctx(&format!("good-{i}"), json!({"region": "local"})))
                    .await
            }
        }));
    }
    for (i, t) in tasks.into_iter().enumerate() {
        let result = t.await.unwrap();
        if i % 2 == 0 {
            let err = match result {
                Ok(state) => panic!("bad-{i} answered: {state:?}"),
                Err(err) => err,
            };
            let CallFailure::Trap { message, .. } = err.failure() else {
                panic!("bad-{i}: expected a trap, got {err:?}");
            };
            assert!(message.contains("unreachable"), "bad-{i}: {message}");
        } else {
            let state = result.unwrap_or_else(|e| panic!("good-{i}: {e:?}"));
            let ClusterState::Ready(infra) = state else {
                panic!("good-{i}: {state:?}");
            };
            assert_eq!(
                infra.control_plane_endpoint.as_ref().unwrap().host,
                format!("good-{i}.local.example.test")
            );
        }
    }
}

/// More calls at once than the instance pool has slots: the calls past its size wait for a
/// slot instead of failing with an exhausted pool, no more instances than slots are ever
/// alive, and every call answers once slots come free.
///
/// Two sessions hold both slots while four calls are made, so the calls cannot run until the
/// sessions end, however the threads are scheduled.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_beyond_the_pool_wait_for_a_slot() {
    init_tracing();
    let rt = Runtime::new(RuntimeConfig {
        pool: PoolConfig {
            max_concurrent_instances: 2,
            ..PoolConfig::default()
        },
        ..RuntimeConfig::default()
    })
    .unwrap();
    let provider = Arc::new(hostile(&rt, Grants::default()).await);
    let first = provider.session().await.unwrap();
    let second = provider.session().await.unwrap();
    let before = rt.stats();
    assert_eq!(before.live_instances, 2, "{before:?}");

    let mut calls = tokio::task::JoinSet::new();
    for i in 0..4 {
        let provider = provider.clone();
        calls.spawn(async move {
            let ctx = ctx(&format!("queued-{i}"), json!({"behaviour": "healthy"}));
            (i, provider.reconcile_cluster(&ctx).await)
        });
    }
    // Every call must come to wait for a slot; none may end while both slots are held.
    while rt.stats().slot_waits < before.slot_waits + 4 {
        if let Some(ended) = calls.try_join_next() {
            panic!("a call ended while every slot was held: {ended:?}");
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let full = rt.stats();
    assert_eq!(full.live_instances, 2, "{full:?}");
    assert_eq!(full.peak_instances, 2, "{full:?}");
    assert!(calls.try_join_next().is_none());

    drop((first, second));
    while let Some(joined) = calls.join_next().await {
        let (i, result) = joined.unwrap();
        let state = result.unwrap_or_else(|e| panic!("queued-{i}: {e:?}"));
        let ClusterState::Ready(infra) = state else {
            panic!("queued-{i}: {state:?}");
        };
        assert_eq!(
            infra.control_plane_endpoint.as_ref().unwrap().host,
            "healthy.test"
        );
    }
    let after = rt.stats();
    assert_eq!(after.peak_instances, 2, "{after:?}");
    assert_eq!(after.live_instances, 0, "{after:?}");
    assert_eq!(after.slot_waits, before.slot_waits + 4, "{after:?}");
}
