//! Calls are async: a slow or busy provider never blocks the executor, and calls to
//! different providers and for different objects run side by side.

use std::time::Duration;

use capw_runtime::infrastructure::ClusterState;
use capw_runtime::{CallFailure, Grants, Limits};
use serde_json::json;

use crate::support::{ctx, example, hostile, runtime};

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
            infra.control_plane_endpoint.host,
            format!("c{i}.local.example.test")
        );
    }
}

/// A failing call (a trap) while others run concurrently leaves the others untouched.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_trap_beside_healthy_calls() {
    let rt = runtime();
    let bad = std::sync::Arc::new(hostile(&rt, Grants::default()).await);
    let good = std::sync::Arc::new(example(&rt).await);
    let mut tasks = Vec::new();
    for i in 0..16 {
        let (bad, good) = (bad.clone(), good.clone());
        tasks.push(tokio::spawn(async move {
            if i % 2 == 0 {
                bad.reconcile_cluster(&ctx("bad", json!({"behaviour": "panic"})))
                    .await
                    .is_err()
            } else {
                good.reconcile_cluster(&ctx("good", json!({"region": "local"})))
                    .await
                    .is_ok()
            }
        }));
    }
    for t in tasks {
        assert!(t.await.unwrap());
    }
}

/// More calls at once than the instance pool has slots: the calls past its size wait for a
/// slot instead of failing with an exhausted pool, and every one answers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_beyond_the_pool_wait_for_a_slot() {
    crate::support::runtime();
    let rt = capw_runtime::Runtime::new(capw_runtime::RuntimeConfig {
        pool: capw_runtime::PoolConfig {
            max_concurrent_instances: 2,
            ..capw_runtime::PoolConfig::default()
        },
        ..capw_runtime::RuntimeConfig::default()
    })
    .unwrap();
    let sleeper = std::sync::Arc::new(hostile(&rt, Grants::default()).await);
    let mut calls = tokio::task::JoinSet::new();
    for i in 0..6 {
        let sleeper = sleeper.clone();
        calls.spawn(async move {
            let ctx = ctx(
                &format!("slow-{i}"),
                json!({"behaviour": "sleep", "millis": 200}),
            );
            (i, sleeper.reconcile_cluster(&ctx).await)
        });
    }
    while let Some(joined) = calls.join_next().await {
        let (i, result) = joined.unwrap();
        assert!(result.is_ok(), "call {i}: {result:?}");
    }
}
