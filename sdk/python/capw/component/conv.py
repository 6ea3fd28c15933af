"""Conversions between the contract's generated types and the SDK's, one function per type
and direction: `plan_input` reads the contract's `plan-input`, `plan` writes a `plan-output`.

Enums match by member name, which the SDK keeps equal to the generated one.
"""

from __future__ import annotations

from typing import Any

from wit_world.exports import bootstrap as wb
from wit_world.exports import control_plane as wcp
from wit_world.exports import infrastructure as wi
from wit_world.exports import lifecycle_hooks as wh
from wit_world.exports import metadata as wm
from wit_world.imports import capw_provider_types as wt

from .. import bootstrap as b
from .. import control_plane as cp
from .. import infrastructure as i
from .. import lifecycle_hooks as h
from .. import metadata as m
from .. import types as t


def _enum(target: Any, value: Any) -> Any:
    return target[value.name]


def _opt(convert: Any, value: Any) -> Any:
    return None if value is None else convert(value)


# ---- into the SDK --------------------------------------------------------------------------


def cluster_ref(v: wt.ClusterRef) -> t.ClusterRef:
    return t.ClusterRef(v.namespace, v.name, v.uid)


def machine_ref(v: wt.MachineRef) -> t.MachineRef:
    return t.MachineRef(v.name, v.uid)


def version(v: wt.KubernetesVersion) -> t.KubernetesVersion:
    return t.KubernetesVersion(v.major, v.minor, v.patch)


def endpoint(v: wt.Endpoint) -> t.Endpoint:
    return t.Endpoint(v.host, v.port)


def join_token(v: wt.JoinToken) -> t.JoinToken:
    return t.JoinToken(
        item=v.item,
        id=v.id,
        secret=v.secret,
        ttl_seconds=v.ttl_seconds,
        extra_groups=tuple(v.extra_groups),
    )


def member(v: wcp.Member) -> cp.Member:
    return cp.Member(
        machine=machine_ref(v.machine),
        version=version(v.version),
        failure_domain=v.failure_domain,
        ready=v.ready,
        created_at=v.created_at,
        deleting=v.deleting,
        etcd=_enum(cp.EtcdMembership, v.etcd),
        out_of_date=tuple(v.out_of_date),
        unhealthy=tuple(v.unhealthy),
    )


def hosted_object(v: wcp.HostedObject) -> cp.HostedObject:
    return cp.HostedObject(
        api_version=v.api_version,
        kind=v.kind,
        name=v.name,
        ready=v.ready,
        message=v.message,
        images=tuple(v.images),
        addresses=tuple(v.addresses),
    )


def plan_input(v: wcp.PlanInput) -> cp.PlanInput:
    return cp.PlanInput(
        version=version(v.version),
        replicas=v.replicas,
        members=tuple(member(x) for x in v.members),
        failure_domains=tuple(v.failure_domains),
        endpoint=_opt(endpoint, v.endpoint),
        failures_tolerated=v.failures_tolerated,
        objects=tuple(hosted_object(x) for x in v.objects),
    )


def machine_spec(v: wi.MachineSpec) -> i.MachineSpec:
    return i.MachineSpec(
        machine=machine_ref(v.machine),
        role=_enum(t.MachineRole, v.role),
        pool=v.pool,
        version=version(v.version),
        failure_domain=v.failure_domain,
        bootstrap_data=bytes(v.bootstrap_data),
    )


def secret_item(v: wb.SecretItem) -> b.SecretItem:
    return b.SecretItem(v.name, bytes(v.data))


def secret_items(v: list) -> tuple[b.SecretItem, ...]:
    return tuple(secret_item(s) for s in v)


def join_credentials(v: wb.JoinCredentials) -> b.JoinCredentials:
    return b.JoinCredentials(v.ca_certificate, _opt(join_token, v.token))


def bootstrap_request(v: wb.BootstrapRequest) -> b.BootstrapRequest:
    return b.BootstrapRequest(
        machine=machine_ref(v.machine),
        role=_enum(t.MachineRole, v.role),
        version=version(v.version),
        endpoint=endpoint(v.endpoint),
        secrets=secret_items(v.secrets),
        control_plane_members=tuple(
            b.ControlPlaneMember(x.name, x.address) for x in v.control_plane_members
        ),
        join=_opt(join_credentials, v.join),
    )


def hook_request(v: wh.HookRequest) -> h.HookRequest:
    return h.HookRequest(
        hook=_enum(h.Hook, v.hook),
        from_version=_opt(version, v.from_version),
        to_version=version(v.to_version),
    )


# ---- out of the SDK ------------------------------------------------------------------------


def provider_error(e: t.ProviderError) -> wt.ProviderError:
    return wt.ProviderError(_enum(wt.ErrorCode, e.code), e.message, e.retryable, e.retry_after_ms)


def field_error(e: m.FieldError) -> wm.FieldError:
    return wm.FieldError(e.path, e.message)


def provider_metadata(v: m.ProviderMetadata) -> wm.ProviderMetadata:
    caps = v.capabilities
    return wm.ProviderMetadata(
        name=v.name,
        version=v.version,
        description=v.description,
        extension_points=[_enum(wm.ExtensionPoint, p) for p in v.extension_points],
        config_schema=v.config_schema,
        capabilities=wm.Capabilities(
            _opt(lambda s: _enum(wm.ControlPlaneShape, s), caps.control_plane_shape),
            caps.control_plane_scalable,
            caps.version_upgrades,
            caps.chains_upgrades,
        ),
        requested_grants=wm.RequestedGrants(
            list(v.requested_grants.http_hosts), list(v.requested_grants.secrets)
        ),
    )


def out_version(v: t.KubernetesVersion) -> wt.KubernetesVersion:
    return wt.KubernetesVersion(v.major, v.minor, v.patch)


def out_endpoint(v: t.Endpoint) -> wt.Endpoint:
    return wt.Endpoint(v.host, v.port)


def out_machine_ref(v: t.MachineRef) -> wt.MachineRef:
    return wt.MachineRef(v.name, v.uid)


def out_join_token(v: t.JoinToken) -> wt.JoinToken:
    return wt.JoinToken(v.item, v.id, v.secret, v.ttl_seconds, list(v.extra_groups))


def optional_join_token(v: t.JoinToken | None) -> wt.JoinToken | None:
    return _opt(out_join_token, v)


def condition(v: t.Condition) -> wt.Condition:
    return wt.Condition(v.type, _enum(wt.ConditionStatus, v.status), v.reason, v.message)


def in_progress(v: t.InProgress) -> wt.InProgress:
    return wt.InProgress(
        v.reason, v.message, v.requeue_after_ms, [condition(c) for c in v.conditions]
    )


def deletion(v: t.Deletion) -> wt.Deletion:
    if isinstance(v, t.DeletionInProgress):
        return wt.Deletion_InProgress(in_progress(v.progress))
    if isinstance(v, t.Deleted):
        return wt.Deletion_Deleted()
    raise TypeError(f"a deletion is Deleted or DeletionInProgress, not {type(v).__name__}")


def cluster_state(v: i.ClusterState) -> wi.ClusterState:
    if isinstance(v, i.ClusterInProgress):
        return wi.ClusterState_InProgress(in_progress(v.progress))
    if not isinstance(v, i.ClusterReady):
        raise TypeError(
            f"a cluster state is ClusterReady or ClusterInProgress, not {type(v).__name__}"
        )
    infra = v.infrastructure
    return wi.ClusterState_Ready(
        wi.ClusterInfrastructure(
            _opt(out_endpoint, infra.control_plane_endpoint),
            [wi.FailureDomain(d.name, d.control_plane) for d in infra.failure_domains],
            [condition(c) for c in infra.conditions],
        )
    )


def machine_status(v: i.MachineStatus) -> wi.MachineStatus:
    return wi.MachineStatus(
        provider_id=v.provider_id,
        phase=_enum(wi.MachinePhase, v.phase),
        addresses=[wt.Address(_enum(wt.AddressKind, a.kind), a.address) for a in v.addresses],
        failure_domain=v.failure_domain,
        message=v.message,
        requeue_after_ms=v.requeue_after_ms,
        conditions=[condition(c) for c in v.conditions],
    )


def listed_machines(v: list) -> list:
    return [
        wi.ListedMachine(
            x.idempotency_key, x.provider_id, x.machine_name, _enum(wi.MachinePhase, x.phase)
        )
        for x in v
    ]


def secrets_state(v: b.SecretsState) -> wb.SecretsState:
    if isinstance(v, b.SecretsInProgress):
        return wb.SecretsState_InProgress(in_progress(v.progress))
    if not isinstance(v, b.SecretsReady):
        raise TypeError(
            f"a secrets state is SecretsReady or SecretsInProgress, not {type(v).__name__}"
        )
    return wb.SecretsState_Ready([wb.SecretItem(s.name, bytes(s.data)) for s in v.items])


def bootstrap_data(v: b.BootstrapData) -> wb.BootstrapData:
    return wb.BootstrapData(_enum(wb.BootstrapFormat, v.format), bytes(v.data))


def step(v: cp.Step) -> wcp.Step:
    if isinstance(v, cp.Nothing):
        return wcp.Step_None_()
    if isinstance(v, cp.CreateMachine):
        x = v.machine
        return wcp.Step_CreateMachine(
            wcp.MachineToCreate(x.init, out_version(x.version), x.failure_domain)
        )
    if isinstance(v, cp.DeleteMachine):
        return wcp.Step_DeleteMachine(out_machine_ref(v.machine))
    if isinstance(v, cp.RemoveEtcdMember):
        return wcp.Step_RemoveEtcdMember(out_machine_ref(v.machine))
    if isinstance(v, cp.ApplyManifests):
        return wcp.Step_ApplyManifests(list(v.manifests))
    if isinstance(v, cp.Wait):
        return wcp.Step_Wait(in_progress(v.progress))
    raise TypeError(f"not a step: {type(v).__name__}")


def certificate_secret(v: cp.CertificateSecret) -> wcp.CertificateSecret:
    return wcp.CertificateSecret(
        v.name,
        [
            wcp.CertificateRequest(
                key=r.key,
                authority=_enum(wcp.CertificateAuthority, r.authority),
                usage=_enum(wcp.CertificateUsage, r.usage),
                common_name=r.common_name,
                organizations=list(r.organizations),
                sans=list(r.sans),
                kubeconfig_server=r.kubeconfig_server,
            )
            for r in v.certificates
        ],
        [_enum(wcp.SecretMaterial, m) for m in v.materials],
    )


def plan(v: cp.Plan) -> wcp.PlanOutput:
    s = v.status
    status = wcp.ControlPlaneStatus(
        s.initialized,
        s.ready,
        _opt(out_version, s.version),
        _opt(out_endpoint, s.endpoint),
        [condition(c) for c in s.conditions],
        s.failures_tolerated,
    )
    return wcp.PlanOutput(
        step(v.step),
        status,
        v.replicas,
        v.ready_replicas,
        v.up_to_date_replicas,
        [certificate_secret(c) for c in v.certificates],
        _opt(lambda d: wcp.SharedDatastore(d.name, d.secret), v.shared_datastore),
    )


def reconcile_output(v: cp.ReconcileOutput) -> wcp.ReconcileOutput:
    if not isinstance(v, cp.ReconcileOutput):
        raise TypeError(f"the answer is a ReconcileOutput, not {type(v).__name__}")
    a = v.access
    access = (
        None
        if a is None
        else wcp.ControlPlaneAccess(
            out_endpoint(a.endpoint),
            a.ca_certificate,
            a.admin_kubeconfig,
            _opt(out_join_token, a.join_token),
        )
    )
    return wcp.ReconcileOutput(plan(v.plan), access)


def hook_response(v: h.HookResponse) -> wh.HookResponse:
    if isinstance(v, h.Hold):
        return wh.HookResponse_Hold(in_progress(v.progress))
    if isinstance(v, h.Proceed):
        return wh.HookResponse_Proceed()
    raise TypeError(f"a hook response is Proceed or Hold, not {type(v).__name__}")
