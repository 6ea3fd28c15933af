//! The infrastructure extension point, as one scenario on a made-up cluster: bring the cluster
//! up, create two machines (one of them twice), list, delete everything twice over.

use capw_runtime::CallError;
use capw_runtime::infrastructure::{ClusterState, MachinePhase, MachineSpec, MachineStatus};
use capw_runtime::types::{
    ClusterRef, Deletion, Endpoint, KubernetesVersion, MachineRef, MachineRole,
};

use super::{Findings, cluster};
use crate::calls::{Progress, Subject, check_hint};
use crate::rules::id;

/// Bootstrap data handed to the machines: cloud-config that does nothing. A backend that
/// checks it may fail the machine; that is a settled answer too.
const BOOTSTRAP_DATA: &[u8] = b"#cloud-config\n# capw conformance suite\n";

fn machine_ref(name: &str) -> MachineRef {
    MachineRef {
        name: name.into(),
        uid: format!("uid-{name}"),
    }
}

fn spec(name: &str, failure_domain: Option<String>) -> MachineSpec {
    MachineSpec {
        machine: machine_ref(name),
        role: MachineRole::Worker,
        pool: "md-0".into(),
        version: KubernetesVersion {
            major: 1,
            minor: 35,
            patch: 0,
        },
        failure_domain,
        bootstrap_data: BOOTSTRAP_DATA.to_vec(),
    }
}

fn cluster_progress(state: &ClusterState) -> Progress {
    match state {
        ClusterState::Ready(_) => Progress::Done,
        ClusterState::InProgress(p) => Progress::Pending(check_hint(p.requeue_after_ms, &p.reason)),
    }
}

fn deletion_progress(d: &Deletion) -> Progress {
    match d {
        Deletion::Deleted => Progress::Done,
        Deletion::InProgress(p) => Progress::Pending(check_hint(p.requeue_after_ms, &p.reason)),
    }
}

fn machine_progress(m: &MachineStatus) -> Progress {
    match m.phase {
        MachinePhase::Running | MachinePhase::Failed => Progress::Done,
        _ => Progress::Pending(match m.requeue_after_ms {
            Some(ms) if ms > 0 => Ok(crate::calls::ms_duration(ms)),
            other => Err(format!(
                "phase {:?} without a requeue hint above 0 (requeue-after-ms {other:?})",
                m.phase
            )),
        }),
    }
}

/// An endpoint that is given but cannot be reached. None is an answer: an infrastructure
/// that makes no endpoint because a service runs the control plane (contract 0.3).
fn endpoint_problem(e: Option<&Endpoint>) -> Option<String> {
    let e = e?;
    (e.host.trim().is_empty() || e.port == 0).then(|| {
        format!(
            "ready with an unusable control-plane endpoint {}:{}",
            e.host, e.port
        )
    })
}

/// `host:port`, or `none`.
fn shown(e: Option<&Endpoint>) -> String {
    e.map_or_else(|| "none".to_owned(), |e| format!("{}:{}", e.host, e.port))
}

pub(crate) async fn run(s: &Subject<'_>, suffix: &str, f: &mut Findings) {
    let p = s.provider;
    let c = cluster(&s.options.cluster_name, suffix, "infra");
    let key = format!("{}-cluster", c.name);
    let ctx = s.ctx(&c, &key);

    // The cluster, to ready.
    let ready = s
        .settle(
            "reconcile-cluster",
            || p.reconcile_cluster(&ctx),
            cluster_progress,
        )
        .await;
    let ready = match ready {
        Ok(ClusterState::Ready(infra)) => Ok(infra),
        Ok(ClusterState::InProgress(_)) => Err("reconcile-cluster: still in progress".to_owned()),
        Err(problem) => Err(problem),
    };
    let infra = match ready {
        Ok(infra) => infra,
        Err(problem) => {
            f.check(id::CLUSTER_CONVERGES, Err(problem));
            skip_rest(f, "the cluster never became ready");
            cleanup(s, &c, &key).await;
            return;
        }
    };
    f.check(
        id::CLUSTER_CONVERGES,
        endpoint_problem(infra.control_plane_endpoint.as_ref()).map_or(Ok(()), Err),
    );
    f.check(
        id::CLUSTER_IDEMPOTENT,
        match s.record(p.reconcile_cluster(&ctx).await) {
            Ok(ClusterState::Ready(again))
                if again.control_plane_endpoint == infra.control_plane_endpoint =>
            {
                Ok(())
            }
            Ok(ClusterState::Ready(again)) => Err(format!(
                "called again with the same key, the endpoint changed from {} to {}",
                shown(infra.control_plane_endpoint.as_ref()),
                shown(again.control_plane_endpoint.as_ref()),
            )),
            Ok(ClusterState::InProgress(p)) => Err(format!(
                "ready, then in-progress ({}) when called again with the same key",
                p.reason
            )),
            Err(e) => Err(format!("called again with the same key: {e}")),
        },
    );

    // Two machines; the first reconciled twice with its key.
    let zone = infra.failure_domains.first().map(|d| d.name.clone());
    let keys = [format!("{}-m1", c.name), format!("{}-m2", c.name)];
    let mut created: Vec<(String, String)> = Vec::new();
    let mut in_progress = Vec::new();
    for (n, key) in keys.iter().enumerate() {
        let name = format!("m{}", n + 1);
        let mctx = s.ctx(&c, key);
        let mspec = spec(&name, zone.clone());
        let settled = s
            .settle(
                &format!("reconcile-machine {name}"),
                || p.reconcile_machine(&mctx, &mspec),
                machine_progress,
            )
            .await;
        match settled {
            Ok(status) => match status.provider_id {
                Some(provider_id) => created.push((key.clone(), provider_id)),
                None => in_progress.push(format!(
                    "{name}: settled in phase {:?} without a provider id ({})",
                    status.phase, status.message
                )),
            },
            Err(problem) => in_progress.push(problem),
        }
    }
    f.problems(id::MACHINE_IN_PROGRESS, in_progress);
    if created.len() < keys.len() {
        f.skip(
            id::MACHINE_IDEMPOTENT,
            format!("needs settled machines ({})", id::MACHINE_IN_PROGRESS),
        );
    } else {
        let (key, first_id) = &created[0];
        let again = s.record(
            p.reconcile_machine(&s.ctx(&c, key), &spec("m1", zone.clone()))
                .await,
        );
        f.check(
            id::MACHINE_IDEMPOTENT,
            match again {
                Ok(m) if m.provider_id.as_deref() == Some(first_id.as_str()) => {
                    if created[1].1 == *first_id {
                        Err(format!(
                            "two idempotency keys gave the same machine {first_id}: another key must create another machine"
                        ))
                    } else {
                        Ok(())
                    }
                }
                Ok(m) => Err(format!(
                    "called again with key {key:?}, it reported provider id {:?} instead of {first_id:?}: a second machine for one key",
                    m.provider_id
                )),
                Err(e) => Err(format!("called again with key {key:?}: {e}")),
            },
        );
    }

    // The list, while the machines exist.
    let mut list_problems = Vec::new();
    match s.record(p.list_machines(&ctx).await) {
        Ok(listed) => {
            for (i, m) in listed.iter().enumerate() {
                if listed[..i]
                    .iter()
                    .any(|o| o.idempotency_key == m.idempotency_key)
                {
                    list_problems.push(format!("key {:?} is listed twice", m.idempotency_key));
                }
            }
            for (key, provider_id) in &created {
                for m in listed.iter().filter(|m| &m.idempotency_key == key) {
                    if &m.provider_id != provider_id {
                        list_problems.push(format!(
                            "key {key:?} is listed with provider id {:?}, but reconcile-machine reported {provider_id:?}",
                            m.provider_id
                        ));
                    }
                }
            }
        }
        Err(e) => list_problems.push(format!("list-machines: {e}")),
    }

    // Deletes: each machine to deleted, then again; a key that never created anything.
    let mut delete_problems = Vec::new();
    for (n, key) in keys.iter().enumerate() {
        let name = format!("m{}", n + 1);
        let mctx = s.ctx(&c, key);
        let mref = machine_ref(&name);
        if let Err(problem) = s
            .settle(
                &format!("delete-machine {name}"),
                || p.delete_machine(&mctx, &mref),
                deletion_progress,
            )
            .await
        {
            delete_problems.push(problem);
            continue;
        }
        delete_problems.extend(deleted_at_once(
            &format!("delete-machine {name} again, once deleted"),
            s.record(p.delete_machine(&mctx, &mref).await),
        ));
    }
    let never = s.ctx(&c, &format!("{}-never-created", c.name));
    delete_problems.extend(deleted_at_once(
        "delete-machine of a key that never created anything",
        s.record(
            p.delete_machine(&never, &machine_ref("never-created"))
                .await,
        ),
    ));
    f.problems(id::DELETE_MACHINE_GONE, delete_problems);

    // The list, once the machines are gone.
    match s.record(p.list_machines(&ctx).await) {
        Ok(listed) => {
            for m in listed.iter().filter(|m| keys.contains(&m.idempotency_key)) {
                list_problems.push(format!(
                    "key {:?} is still listed ({}) after delete-machine answered deleted",
                    m.idempotency_key, m.provider_id
                ));
            }
        }
        Err(e) => list_problems.push(format!("list-machines after the deletes: {e}")),
    }
    f.problems(id::LIST_ONE_PER_KEY, list_problems);

    // The cluster: to deleted, again, and a cluster that never existed.
    let mut problems = Vec::new();
    match s
        .settle(
            "delete-cluster",
            || p.delete_cluster(&ctx),
            deletion_progress,
        )
        .await
    {
        Ok(_) => problems.extend(deleted_at_once(
            "delete-cluster again, once deleted",
            s.record(p.delete_cluster(&ctx).await),
        )),
        Err(problem) => problems.push(problem),
    }
    let ghost = cluster(&s.options.cluster_name, suffix, "never-created");
    let ghost_ctx = s.ctx(&ghost, &format!("{}-cluster", ghost.name));
    problems.extend(deleted_at_once(
        "delete-cluster of a cluster that never existed",
        s.record(p.delete_cluster(&ghost_ctx).await),
    ));
    f.problems(id::DELETE_CLUSTER_GONE, problems);
}

/// A problem, unless `answer` is `deleted` at once: what a delete of something already gone
/// must answer.
fn deleted_at_once(what: &str, answer: Result<Deletion, CallError>) -> Option<String> {
    match answer {
        Ok(Deletion::Deleted) => None,
        Ok(Deletion::InProgress(p)) => Some(format!(
            "{what}: in-progress ({}) instead of deleted",
            p.reason
        )),
        Err(e) => Some(format!("{what}: {e}")),
    }
}

fn skip_rest(f: &mut Findings, why: &str) {
    for rule in [
        id::CLUSTER_IDEMPOTENT,
        id::MACHINE_IN_PROGRESS,
        id::MACHINE_IDEMPOTENT,
        id::LIST_ONE_PER_KEY,
        id::DELETE_MACHINE_GONE,
        id::DELETE_CLUSTER_GONE,
    ] {
        f.skip(rule, format!("{why} ({})", id::CLUSTER_CONVERGES));
    }
}

/// Best effort: leave nothing behind in the backend when the scenario stopped early.
async fn cleanup(s: &Subject<'_>, c: &ClusterRef, key: &str) {
    let _ = s.record(s.provider.delete_cluster(&s.ctx(c, key)).await);
}
