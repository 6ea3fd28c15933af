//! Rollouts of a change that shapes a machine: a worker class's `instanceType` replaces only
//! its pool's machines, within the pool's surge and unavailability; a change the provider marks
//! as not shaping a machine (`requestTimeoutMs`) replaces nothing.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use capw_engine::store::ObjectKey;
use capw_engine::{Executor, PassOutcome};
use serde_json::{Value, json};

use crate::support::{ClusterOutcome, condition};
use crate::support::{Env, cluster, first_of_kind, inventory, machines, manifests, settle};

/// The quickstart's class with two worker classes, `a` and `b`, and a Cluster `roll` with a
/// pool of each; the quickstart's own Clusters left out.
fn objects(env: &Env) -> Vec<Value> {
    let mut objects: Vec<Value> = manifests(&env.sim, "")
        .into_iter()
        .filter(|o| o["kind"] != "Cluster")
        .collect();
    let mut class = first_of_kind(&objects, "ClusterClass");
    let worker = class["spec"]["workers"]["machineDeployments"][0].clone();
    let mut a = worker.clone();
    a["class"] = "a".into();
    a["rollout"] = json!({"strategy": {"rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}}});
    let mut b = worker;
    b["class"] = "b".into();
    class["metadata"]["name"] = "two-pools".into();
    class["spec"]["workers"]["machineDeployments"] = json!([a, b]);
    objects.push(class);
    objects.push(json!({
        "apiVersion": "capw.dev/v1alpha1", "kind": "Cluster",
        "metadata": {"name": "roll", "namespace": "default"},
        "spec": {"topology": {
            "classRef": {"name": "two-pools"}, "version": "v1.34.4",
            "controlPlane": {"replicas": 1},
            "workers": {"machineDeployments": [
                {"class": "a", "name": "md-a", "replicas": 3},
                {"class": "b", "name": "md-b", "replicas": 2},
            ]},
        }},
    }));
    objects
}

fn pool_of(m: &Value) -> &str {
    m["spec"]["pool"].as_str().unwrap_or_default()
}

fn names(ms: &[Value], pool: &str) -> BTreeSet<String> {
    ms.iter()
        .filter(|m| pool_of(m) == pool)
        .map(|m| m["metadata"]["name"].as_str().unwrap().to_owned())
        .collect()
}

/// simcloud's instance type of each machine, by the Machine's name.
async fn instance_types(env: &Env) -> BTreeMap<String, String> {
    let inventory = inventory(&env.sim).await;
    (inventory.clusters.values())
        .flat_map(|c| c.instances.iter())
        .map(|i| (i.tags["capw.dev/machine"].clone(), i.instance_type.clone()))
        .collect()
}

/// The two-pool class and Cluster `roll`, converged.
async fn converged() -> (Env, Executor) {
    let env = Env::start(Duration::from_millis(5)).await;
    env.apply(objects(&env));
    let executor = env.executor().await;
    let report = settle(&executor).await;
    assert_eq!(report.outcomes["default/roll"], ClusterOutcome::Converged);
    (env, executor)
}

/// Runs passes of `roll` until one converges, calling `each` with its Machines after every
/// pass; panics when a pass blocks, the Cluster goes, or nothing converges in two minutes.
async fn roll_until_converged(env: &Env, executor: &Executor, mut each: impl FnMut(&[Value])) {
    let key = ObjectKey::namespaced("Cluster", "default", "roll");
    let deadline = tokio::time::Instant::now() + Duration::from_secs(120);
    loop {
        let outcome = executor.reconcile(&key).await.unwrap();
        let now = machines(&env.store, "roll");
        each(&now);
        match outcome {
            PassOutcome::Converged(_) => return,
            PassOutcome::Blocked(why) => panic!("blocked: {why}"),
            PassOutcome::Gone => panic!("gone"),
            PassOutcome::Progress { .. } => {}
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "no convergence: {now:#?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_changed_instance_type_rolls_only_its_pool_within_its_bounds() {
    let (env, executor) = converged().await;
    let before = machines(&env.store, "roll");
    let (old_a, old_b) = (names(&before, "md-a"), names(&before, "md-b"));
    assert_eq!((old_a.len(), old_b.len()), (3, 2));
    let types = instance_types(&env).await;
    assert!(old_a.iter().all(|n| types[n] == "standard"), "{types:?}");

    // Pool a's machines get bigger; pool b's requests get a longer timeout.
    env.store
        .update(
            &ObjectKey::namespaced("ClusterClass", "default", "two-pools"),
            |c| {
                let mds = &mut c["spec"]["workers"]["machineDeployments"];
                mds[0]["infrastructure"]["config"]["instanceType"] = "large".into();
                mds[1]["infrastructure"]["config"]["requestTimeoutMs"] = 9000.into();
                Ok(())
            },
        )
        .unwrap();

    let mut first = true;
    roll_until_converged(&env, &executor, |now| {
        if first {
            // The first pass names what changed on every old machine of pool a before any
            // replacement boots, and nothing on pool b's.
            for m in now
                .iter()
                .filter(|m| old_a.contains(m["metadata"]["name"].as_str().unwrap()))
            {
                let c = condition(m, "UpToDate");
                assert_eq!(c["status"], "False", "{m:#}");
                let message = c["message"].as_str().unwrap();
                assert!(
                    message.contains("infrastructure.config/instanceType"),
                    "{message}"
                );
                assert!(!message.contains("requestTimeoutMs"), "{message}");
            }
            // Pool b's machines were never out of date: they carry no `UpToDate` at all.
            for m in now.iter().filter(|m| pool_of(m) == "md-b") {
                assert!(condition(m, "UpToDate").is_null(), "{m:#}");
            }
            first = false;
        }
        let of_a: Vec<&Value> = now.iter().filter(|m| pool_of(m) == "md-a").collect();
        assert!(
            of_a.len() <= 3 + 1,
            "more than maxSurge extra: {}",
            of_a.len()
        );
        let running = of_a
            .iter()
            .filter(|m| {
                m["metadata"]["deletionTimestamp"].is_null() && m["status"]["phase"] == "Running"
            })
            .count();
        assert!(
            running >= 3,
            "fewer than replicas - maxUnavailable running: {running}"
        );
        assert_eq!(names(now, "md-b"), old_b, "pool b rolled");
    })
    .await;

    let after = machines(&env.store, "roll");
    let new_a = names(&after, "md-a");
    assert_eq!(new_a.len(), 3);
    assert!(
        new_a.is_disjoint(&old_a),
        "every machine of pool a replaced"
    );
    assert_eq!(names(&after, "md-b"), old_b);
    let types = instance_types(&env).await;
    assert!(new_a.iter().all(|n| types[n] == "large"), "{types:?}");
    assert!(
        old_a.iter().all(|n| !types.contains_key(n)),
        "old instances deleted"
    );
    let c = cluster(&env.store, "roll").unwrap();
    let pools = c["status"]["workers"].as_array().unwrap();
    for pool in pools {
        assert_eq!(
            pool["upToDateReplicas"], pool["desiredReplicas"],
            "{pool:#}"
        );
    }
}

/// The Machines of `ms` with role `ControlPlane`, by name, live ones only.
fn control_plane(ms: &[Value]) -> BTreeSet<String> {
    ms.iter()
        .filter(|m| m["spec"]["role"] != "Worker" && m["metadata"]["deletionTimestamp"].is_null())
        .map(|m| m["metadata"]["name"].as_str().unwrap().to_owned())
        .collect()
}

/// Contract 0.3 tells the control-plane provider what makes each member out of date: a
/// changed `instanceType` of the control plane's machines rolls the control plane through
/// kubeadm-control-plane's plan (surge, then removal) at the same version, with its
/// `Upgrading` condition naming the input; a request timeout rolls nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_changed_control_plane_instance_type_rolls_the_control_plane_through_its_provider() {
    let (env, executor) = converged().await;
    let old = control_plane(&machines(&env.store, "roll"));
    assert_eq!(old.len(), 1);
    let key = ObjectKey::namespaced("Cluster", "default", "roll");
    let class = ObjectKey::namespaced("ClusterClass", "default", "two-pools");

    // A timeout does not shape a machine: nothing moves.
    env.store
        .update(&class, |c| {
            c["spec"]["controlPlane"]["machineInfrastructure"]["config"]["requestTimeoutMs"] =
                9000.into();
            Ok(())
        })
        .unwrap();
    for _ in 0..3 {
        let outcome = executor.reconcile(&key).await.unwrap();
        assert!(matches!(outcome, PassOutcome::Converged(_)), "{outcome:?}");
    }
    assert_eq!(control_plane(&machines(&env.store, "roll")), old);

    env.store
        .update(&class, |c| {
            c["spec"]["controlPlane"]["machineInfrastructure"]["config"]["instanceType"] =
                "large".into();
            Ok(())
        })
        .unwrap();
    let mut named = false;
    let mut counted = false;
    roll_until_converged(&env, &executor, |all| {
        let c = cluster(&env.store, "roll").unwrap();
        // The host names the changed input on the old machine, and counts it out of date.
        if let Some(m) = all
            .iter()
            .find(|m| old.contains(m["metadata"]["name"].as_str().unwrap()))
        {
            let up = condition(m, "UpToDate");
            if up["status"] == "False" {
                let message = up["message"].as_str().unwrap_or_default();
                assert!(
                    message.contains("changed: infrastructure.config/instanceType")
                        && message.contains("the control-plane provider's plan"),
                    "{up:#}"
                );
                let cp = &c["status"]["controlPlane"];
                counted |= cp["upToDateReplicas"].as_i64() < cp["replicas"].as_i64();
            }
        }
        let upgrading = condition(&c, "controlplane.capw.dev/Upgrading");
        if upgrading["status"] == "True" {
            let message = upgrading["message"].as_str().unwrap_or_default();
            assert!(
                message.contains("changed: infrastructure.config/instanceType"),
                "{upgrading:#}"
            );
            named = true;
        }
        let cp = all.iter().filter(|m| m["spec"]["role"] != "Worker").count();
        assert!(cp <= 2, "more than one surge machine: {cp}");
        assert!(
            all.iter()
                .filter(|m| m["spec"]["role"] != "Worker")
                .all(|m| m["spec"]["version"] == "v1.34.4"),
            "the version moved"
        );
    })
    .await;
    assert!(named, "the provider never said what changed");
    assert!(counted, "the old machine was never counted out of date");
    let new = control_plane(&machines(&env.store, "roll"));
    assert_eq!(new.len(), 1);
    assert!(
        new.is_disjoint(&old),
        "the control-plane machine was not replaced"
    );
    let types = instance_types(&env).await;
    assert!(new.iter().all(|n| types[n] == "large"), "{types:?}");
    let c = cluster(&env.store, "roll").unwrap();
    assert_eq!(
        condition(&c, "controlplane.capw.dev/Upgrading")["status"],
        "False",
        "{c:#}"
    );
    assert_eq!(c["status"]["controlPlane"]["upToDateReplicas"], 1, "{c:#}");
}
