"""The classes componentize-py exports: each function converts its arguments into the SDK's
types, runs `capw.dispatch.call`, and converts the answer (or the `ProviderError`, raised as
the contract's `Err`) back."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from componentize_py_types import Err
from wit_world import exports as wit
from wit_world.imports import capw_provider_types as wit_types

from .. import dispatch, metadata
from ..context import CallSource
from ..metadata import ExtensionPoint
from ..types import ClusterRef, ErrorCode, ProviderError
from . import conv


class HostCall:
    """The lent `call-context` as the SDK's `CallSource`."""

    def __init__(self, ctx: wit_types.CallContext) -> None:
        self._ctx = ctx

    def cluster(self) -> ClusterRef:
        return conv.cluster_ref(self._ctx.cluster())

    def config(self) -> str:
        return self._ctx.config()

    def idempotency_key(self) -> str:
        return self._ctx.idempotency_key()

    def remaining_ms(self) -> int:
        return self._ctx.remaining_ms()


def classes(provider_cls: type) -> tuple[type, type, type, type, type]:
    """The five export classes for `provider_cls`."""

    def run(
        point: ExtensionPoint, function: str, ctx: Any, answer: Callable[[Any], Any], *args: Any
    ) -> Any:
        source: CallSource = HostCall(ctx)
        try:
            result = dispatch.call(provider_cls(), point, function, source, *args)
        except ProviderError as e:
            raise Err(conv.provider_error(e)) from None
        try:
            return answer(result)
        except Exception as e:  # noqa: BLE001 - an answer the contract cannot carry
            message = f"{function}: the answer does not fit the contract: {type(e).__name__}: {e}"
            raise Err(
                conv.provider_error(ProviderError.retryable(ErrorCode.INTERNAL, message))
            ) from None

    INFRA, BOOT, CP, HOOKS = (
        ExtensionPoint.INFRASTRUCTURE,
        ExtensionPoint.BOOTSTRAP,
        ExtensionPoint.CONTROL_PLANE,
        ExtensionPoint.LIFECYCLE_HOOKS,
    )

    class Metadata(wit.Metadata):
        def describe(self):
            return conv.provider_metadata(metadata.describe(provider_cls()))

        def validate_config(self, config: str) -> None:
            errors = metadata.validate_config(provider_cls(), config)
            if errors:
                raise Err([conv.field_error(e) for e in errors])

    class Infrastructure(wit.Infrastructure):
        def reconcile_cluster(self, ctx):
            return run(INFRA, "infrastructure.reconcile-cluster", ctx, conv.cluster_state)

        def delete_cluster(self, ctx):
            return run(INFRA, "infrastructure.delete-cluster", ctx, conv.deletion)

        def reconcile_machine(self, ctx, spec):
            return run(
                INFRA,
                "infrastructure.reconcile-machine",
                ctx,
                conv.machine_status,
                conv.machine_spec(spec),
            )

        def delete_machine(self, ctx, machine):
            return run(
                INFRA,
                "infrastructure.delete-machine",
                ctx,
                conv.deletion,
                conv.machine_ref(machine),
            )

        def list_machines(self, ctx):
            return run(INFRA, "infrastructure.list-machines", ctx, conv.listed_machines)

    class Bootstrap(wit.Bootstrap):
        def cluster_secrets(self, ctx):
            return run(BOOT, "bootstrap.cluster-secrets", ctx, conv.secrets_state)

        def generate(self, ctx, request):
            return run(
                BOOT,
                "bootstrap.generate",
                ctx,
                conv.bootstrap_data,
                conv.bootstrap_request(request),
            )

        def kubeconfig(self, ctx, endpoint, secrets):
            items = conv.secret_items(secrets)
            return run(BOOT, "bootstrap.kubeconfig", ctx, str, conv.endpoint(endpoint), items)

        def current_join_token(self, ctx, secrets):
            return run(
                BOOT,
                "bootstrap.current-join-token",
                ctx,
                conv.optional_join_token,
                conv.secret_items(secrets),
            )

        def renew_join_token(self, ctx, secrets):
            return run(
                BOOT,
                "bootstrap.renew-join-token",
                ctx,
                conv.out_join_token,
                conv.secret_items(secrets),
            )

    class ControlPlane(wit.ControlPlane):
        def plan(self, ctx, input):
            return run(CP, "control-plane.plan", ctx, conv.plan, conv.plan_input(input))

        def reconcile_control_plane(self, ctx, input):
            return run(
                CP,
                "control-plane.reconcile-control-plane",
                ctx,
                conv.reconcile_output,
                conv.plan_input(input),
            )

        def delete_control_plane(self, ctx):
            return run(CP, "control-plane.delete-control-plane", ctx, conv.deletion)

    class LifecycleHooks(wit.LifecycleHooks):
        def handle(self, ctx, request):
            return run(
                HOOKS, "lifecycle-hooks.handle", ctx, conv.hook_response, conv.hook_request(request)
            )

    return Metadata, Infrastructure, Bootstrap, ControlPlane, LifecycleHooks
