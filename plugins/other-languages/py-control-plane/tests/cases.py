"""kubeadm-control-plane's plan cases (plugins/kubeadm-control-plane/plan-cases.json), read
into plan inputs, and the checks of an answer against a case's expectation."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from capw import ConditionStatus, Endpoint, KubernetesVersion, testing
from capw.control_plane import (
    CreateMachine,
    DeleteMachine,
    EtcdMembership,
    Member,
    Nothing,
    Plan,
    PlanInput,
    RemoveEtcdMember,
    Wait,
)

FILE = Path(__file__).resolve().parents[3] / "kubeadm-control-plane" / "plan-cases.json"

#: Fields of a member or input that only contract 0.3 carries: the cases that give them are
#: marked `contract: 0.3`.
CONTRACT_0_3_FIELDS = frozenset({"etcd", "outOfDate", "unhealthy", "failuresTolerated"})


def load() -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The defaults and the cases of the file."""
    document = json.loads(FILE.read_text())
    return document["defaults"], document["cases"]


def endpoint(value: dict[str, Any] | None) -> Endpoint | None:
    return None if value is None else Endpoint(value["host"], value["port"])


def plan_input(defaults: dict[str, Any], case: dict[str, Any]) -> tuple[str, PlanInput]:
    """The provider config (JSON) and the plan input of `case`."""
    given = {**defaults, **case["input"]}
    members = tuple(
        Member(
            machine=testing.machine(m["name"]),
            version=KubernetesVersion.parse(m["version"]),
            failure_domain=m.get("failureDomain"),
            ready=m.get("ready", True),
            created_at=m["createdAt"],
            deleting=m.get("deleting", False),
            # Absent: etcd not observed, as kubeadm-control-plane's tests/plan_cases.rs reads it.
            etcd=EtcdMembership(m.get("etcd", "unknown")),
            out_of_date=tuple(m.get("outOfDate", ())),
            unhealthy=tuple(m.get("unhealthy", ())),
        )
        for m in given["members"]
    )
    return json.dumps(given["config"]), PlanInput(
        version=KubernetesVersion.parse(given["version"]),
        replicas=given["replicas"],
        members=members,
        failure_domains=tuple(given["failureDomains"]),
        endpoint=endpoint(given["endpoint"]),
        failures_tolerated=given.get("failuresTolerated"),
    )


def step_of(plan: Plan) -> dict[str, Any]:
    """The plan's step in the file's terms, with every field the step has."""
    step = plan.step
    if isinstance(step, Nothing):
        return {"step": "none"}
    if isinstance(step, CreateMachine):
        m = step.machine
        return {
            "step": "create-machine",
            "init": m.init,
            "version": str(m.version),
            "failureDomain": m.failure_domain,
        }
    if isinstance(step, DeleteMachine):
        return {"step": "delete-machine", "machine": step.machine.name}
    if isinstance(step, RemoveEtcdMember):
        return {"step": "remove-etcd-member", "machine": step.machine.name}
    if isinstance(step, Wait):
        p = step.progress
        return {
            "step": "wait",
            "reason": p.reason,
            "message": p.message,
            "requeueAfterMs": p.requeue_after_ms,
        }
    return {"step": type(step).__name__}


STATUS_NAMES = {
    ConditionStatus.TRUE: "True",
    ConditionStatus.FALSE: "False",
    ConditionStatus.UNKNOWN: "Unknown",
}


def answer_of(plan: Plan, expect: dict[str, Any]) -> dict[str, Any]:
    """The plan in the file's terms, restricted to the fields `expect` names, so that the two
    compare with `assertEqual` and a difference shows field by field."""
    status = plan.status
    found = {
        **step_of(plan),
        "initialized": status.initialized,
        "ready": status.ready,
        "replicas": plan.replicas,
        "readyReplicas": plan.ready_replicas,
        "upToDateReplicas": plan.up_to_date_replicas,
        "statusVersion": None if status.version is None else str(status.version),
        "statusEndpoint": None
        if status.endpoint is None
        else {"host": status.endpoint.host, "port": status.endpoint.port},
    }
    if "conditions" in expect:
        found["conditions"] = [
            [c.type, STATUS_NAMES[c.status], c.reason, c.message][: len(want)]
            for c, want in zip(status.conditions, expect["conditions"], strict=False)
        ] + [[c.type] for c in status.conditions[len(expect["conditions"]) :]]
    return {k: found.get(k) for k in expect}
