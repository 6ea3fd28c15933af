"""What a provider's native unit tests need: call contexts, calls made as the host makes them,
config checks, control-plane members as a 0.3 host observes them, the contract's rules on
etcd members and join tokens, and a fake host (secrets, HTTP, the log). Plain `unittest`, no
packages, no wasm.

    from capw import testing

    class ConfigTest(unittest.TestCase):
        def test_even_replicas_are_refused_at_their_path(self):
            errors = testing.assert_refused_at(MyProvider(), '{"replicas": 4}', ["/replicas"])
            testing.assert_field_error(errors, "/replicas", "odd")

        def test_plan_creates_the_init_machine(self):
            plan = MyProvider().plan(testing.context(MyProvider, "{}"), plan_input)

The assertions raise `AssertionError` with what was expected and what came instead, so they
read the same inside any `TestCase`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import types
import typing
from collections.abc import Callable, Iterator, Sequence
from datetime import timedelta
from typing import Any

from . import config as _config
from . import host as _host
from . import http as _http
from . import metadata as _metadata
from . import schema as _schema
from .bootstrap import SecretItem
from .context import Context, GivenCall
from .control_plane import DeleteMachine, EtcdMembership, Member, Plan, PlanInput
from .dispatch import call as _call
from .metadata import ExtensionPoint, FieldError
from .provider import Provider
from .types import ClusterRef, JoinToken, KubernetesVersion, MachineRef

#: Namespace of the cluster `context` calls for.
NAMESPACE = "default"
#: Name of the cluster `context` calls for.
CLUSTER_NAME = "c1"
#: The idempotency key of the contexts `context` builds.
IDEMPOTENCY_KEY = "key-1"
#: The deadline of the contexts `context` builds.
DEADLINE = timedelta(seconds=10)


def cluster(namespace: str = NAMESPACE, name: str = CLUSTER_NAME) -> ClusterRef:
    """The cluster `namespace/name`, with uid `uid-NAME`."""
    return ClusterRef(namespace, name, f"uid-{name}")


def machine(name: str) -> MachineRef:
    """The machine `name`, with uid `uid-NAME`."""
    return MachineRef(name, f"uid-{name}")


def version(minor: int, patch: int = 0) -> KubernetesVersion:
    """Kubernetes `v1.MINOR.PATCH`."""
    return KubernetesVersion(1, minor, patch)


def member(
    name: str,
    minor: int = 35,
    *,
    ready: bool = True,
    created_at: int = 0,
    failure_domain: str | None = None,
    deleting: bool = False,
    etcd: EtcdMembership = EtcdMembership.UNKNOWN,
    out_of_date: Sequence[str] = (),
    unhealthy: Sequence[str] = (),
) -> Member:
    """A control-plane member on machine `name` (`machine(name)`) running `v1.MINOR.0`: ready,
    not being deleted, etcd not observed, up to date and healthy unless told otherwise."""
    return Member(
        machine=machine(name),
        version=version(minor),
        failure_domain=failure_domain,
        ready=ready,
        created_at=created_at,
        deleting=deleting,
        etcd=etcd,
        out_of_date=tuple(out_of_date),
        unhealthy=tuple(unhealthy),
    )


def in_etcd(input: PlanInput) -> PlanInput:
    """`input` as a host that observed etcd list every member says it: each member's `etcd`
    is `EtcdMembership.MEMBER`."""
    return dataclasses.replace(
        input,
        members=tuple(dataclasses.replace(m, etcd=EtcdMembership.MEMBER) for m in input.members),
    )


def assert_etcd_members_kept(input: PlanInput, plan: Plan) -> None:
    """Checks the contract's rule `control-plane.plan.etcd-members` on one answer: `plan`
    deletes no member `input` says etcd lists (such a member leaves through
    `RemoveEtcdMember`; `capw.control_plane.removal` answers the right step)."""
    step = plan.step
    if not isinstance(step, DeleteMachine):
        return
    listed = next((m for m in input.members if m.machine == step.machine and m.in_etcd), None)
    if listed is not None:
        raise AssertionError(
            f"the plan deletes `{step.machine.name}`, which etcd lists: it must answer "
            "RemoveEtcdMember for it"
        )


def assert_join_token_renews(
    provider: Provider, secrets: Sequence[SecretItem], config_json: str = "{}"
) -> JoinToken | None:
    """Checks the contract's rule `bootstrap.join-token.renews` as the conformance suite does,
    calling as the host calls: `current-join-token` answers None (then nothing else is
    checked and None is returned), or a token in an item of `secrets`; `renew-join-token`
    then answers a token with a new id for the same item, which `current-join-token` names
    once it is stored there (as `<id>.<secret>`). Returns the renewed token. Never shows a
    token's secret part."""
    items = tuple(secrets)
    current = call(provider, "bootstrap.current-join-token", items, config_json=config_json)
    if current is None:
        return None
    if not any(i.name == current.item for i in items):
        raise AssertionError(
            f"current-join-token names item {current.item!r}, which the secrets do not have"
        )
    renewed = call(provider, "bootstrap.renew-join-token", items, config_json=config_json)
    if renewed.item != current.item:
        raise AssertionError(
            f"renew-join-token answered item {renewed.item!r}, current-join-token names "
            f"{current.item!r}"
        )
    if renewed.id == current.id:
        raise AssertionError(f"renew-join-token answered the current token's id {current.id}")
    stored = tuple(i for i in items if i.name != renewed.item) + (
        SecretItem(renewed.item, renewed.token.encode()),
    )
    named = call(provider, "bootstrap.current-join-token", stored, config_json=config_json)
    if named is None or named.id != renewed.id:
        found = "none" if named is None else named.id
        raise AssertionError(
            f"with the renewed token {renewed.id} stored, current-join-token names {found}"
        )
    return renewed


def source(
    config_json: str = "{}",
    *,
    cluster_ref: ClusterRef | None = None,
    idempotency_key: str = IDEMPOTENCY_KEY,
    deadline: timedelta = DEADLINE,
) -> GivenCall:
    """A call's context as the host would lend it; its `reads` count what was asked for."""
    return GivenCall(cluster_ref or cluster(), config_json, idempotency_key, deadline)


def config(provider: type[Provider], config_json: str) -> Any:
    """`config_json` checked against the provider's schema, defaults applied, parsed into its
    config dataclass, as every call parses it. Fails the test, naming the field, when it does
    not parse."""
    try:
        return _config.parse(provider.CONFIG, provider.config_schema(), config_json)
    except _config.ConfigError as e:
        raise AssertionError(f"test config {config_json}: {e}") from None


def context(
    provider: type[Provider],
    config_json: str = "{}",
    *,
    cluster_ref: ClusterRef | None = None,
    idempotency_key: str = IDEMPOTENCY_KEY,
    deadline: timedelta = DEADLINE,
) -> Context:
    """A call's `Context`: cluster `default/c1`, key `key-1`, ten seconds, unless told
    otherwise, with `config_json` parsed as `config` does."""
    parsed = config(provider, config_json)
    return Context(
        parsed,
        source(
            config_json, cluster_ref=cluster_ref, idempotency_key=idempotency_key, deadline=deadline
        ),
    )


def call(
    provider: Provider, function: str, *args: Any, config_json: str = "{}", **context_args: Any
) -> Any:
    """`function` (`control-plane.plan`, `infrastructure.reconcile-cluster`, ...) as the host
    calls it through the component: unsupported points and unparsable configs refused before
    the method runs, any exception answered as the `ProviderError` the host would get."""
    point = ExtensionPoint(function.split(".", 1)[0])
    return _call(provider, point, function, source(config_json, **context_args), *args)


def config_schema(provider: type[Provider]) -> dict[str, Any]:
    """The config schema `provider` publishes, checked to use only the keywords the SDK
    enforces (`capw.schema`)."""
    schema = provider.config_schema()
    try:
        _schema.check_schema(schema)
    except _schema.SchemaError as e:
        raise AssertionError(f"the config schema of {provider.NAME}: {e}") from None
    return schema


def assert_schema_matches(provider: type[Provider]) -> None:
    """Checks that the schema and the config dataclass say the same fields: every property of
    the schema's top-level object is a field (by its JSON name) and every field a property,
    nested dataclasses likewise, and the object closed (`additionalProperties: false`)."""
    schema = config_schema(provider)
    if provider.CONFIG is None:
        return
    problems = list(_mismatches(provider.CONFIG, schema, schema, ""))
    if problems:
        raise AssertionError(
            f"the config schema and {provider.CONFIG.__name__} of {provider.NAME} disagree:\n"
            + "\n".join(problems)
        )


def _mismatches(cls: type, schema: dict, root: dict, at: str) -> Iterator[str]:
    if "$ref" in schema:
        schema = _schema.resolve(root, schema["$ref"])
    if schema.get("additionalProperties") is not False:
        yield (
            f"`{at}`: the object is not closed (additionalProperties: false): unknown fields "
            "would pass"
        )
    properties = schema.get("properties", {})
    hints = typing.get_type_hints(cls)
    fields = {_config.json_name(f): f for f in dataclasses.fields(cls) if f.init}
    for name in properties:
        if name not in fields:
            yield f"`{at}/{name}`: in the schema, not a field of {cls.__name__}"
    for name, f in fields.items():
        if name not in properties:
            yield f"`{at}/{name}`: a field of {cls.__name__}, not in the schema"
            continue
        required = f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
        if (
            required
            and name not in schema.get("required", ())
            and "default" not in properties[name]
        ):
            yield (
                f"`{at}/{name}`: the field has no default, the schema neither requires it nor "
                "gives one"
            )
        inner = _dataclass_in(hints.get(f.name))
        if inner is not None and isinstance(properties[name], dict):
            yield from _mismatches(inner, properties[name], root, f"{at}/{name}")


def _dataclass_in(hint: Any) -> type | None:
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return hint
    for arg in typing.get_args(hint):
        if arg is not type(None):
            union = typing.get_origin(hint) in (typing.Union, types.UnionType)
            found = _dataclass_in(arg) if union else None
            if found is not None:
                return found
    return None


def assert_accepted(provider: Provider, config_json: str) -> None:
    """Checks that `validate-config` accepts `config_json` (its schema and its rules)."""
    errors = _metadata.validate_config(provider, config_json)
    if errors:
        raise AssertionError(
            f"validate-config of {provider.NAME} refused {config_json}:\n{_list(errors)}"
        )


def assert_refused_at(
    provider: Provider, config_json: str, paths: Sequence[str]
) -> list[FieldError]:
    """Checks that `validate-config` refuses `config_json` with errors at exactly `paths`, in
    the order reported, and returns them for `assert_field_error`."""
    errors = _metadata.validate_config(provider, config_json)
    found = [e.path for e in errors]
    if found != list(paths):
        got = _list(errors) if errors else "none (accepted)"
        raise AssertionError(
            f"validate-config of {provider.NAME} on {config_json}: expected errors at "
            f"{list(paths)}, got:\n{got}"
        )
    return errors


def assert_field_error(errors: Sequence[FieldError], path: str, message_contains: str) -> None:
    """Checks that an error at `path` has a message containing `message_contains`."""
    if not any(e.path == path and message_contains in e.message for e in errors):
        raise AssertionError(
            f"expected an error at `{path}` containing {message_contains!r}, got:\n{_list(errors)}"
        )


def _list(errors: Sequence[FieldError]) -> str:
    return "".join(f"`{e.path}`: {e.message}\n" for e in errors)


@dataclasses.dataclass(frozen=True)
class Record:
    """One log record the fake host received."""

    level: str
    message: str
    fields: tuple[tuple[str, str], ...]


@dataclasses.dataclass(frozen=True)
class SentRequest:
    """A request as the host received it."""

    method: str
    #: scheme://authority/path?query
    url: str
    #: As sent, content-length included.
    headers: tuple[tuple[str, bytes], ...]
    body: bytes
    timeout_ms: int | None

    def header(self, name: str) -> bytes | None:
        """The first value of header `name`, compared case-insensitively."""
        return next((v for n, v in self.headers if n.lower() == name.lower()), None)


class FakeHost:
    """A capw host for a test: the secrets it grants, how it answers HTTP requests, and the
    log records and requests it received.

    `secrets` maps grant names to values; a value of None is granted but not found. `http`
    answers each request with a `capw.http.Response` (or raises `capw.http.HTTPError`); None
    denies every request, as a host does for an authority not granted. Install it with
    `use_host` (a context manager) for the length of a test.
    """

    def __init__(
        self,
        secrets: dict[str, bytes | None] | None = None,
        http: Callable[[SentRequest], _http.Response] | None = None,
    ) -> None:
        self.secrets = dict(secrets or {})
        self.answer_http = http
        self.logs: list[Record] = []
        self.sent: list[SentRequest] = []

    def log(self, level: str, message: str, fields: Sequence[tuple[str, str]]) -> None:
        self.logs.append(Record(level, message, tuple(fields)))

    def secret(self, name: str) -> bytes:
        if name not in self.secrets:
            raise _host.SecretNotGranted(name)
        value = self.secrets[name]
        if value is None:
            raise _host.SecretNotFound(name)
        return value

    def http(
        self, request: _http.Request, target: _http.Target, headers: Sequence[tuple[str, bytes]]
    ) -> _http.Response:
        scheme = "https" if target.https else "http"
        sent = SentRequest(
            request.method,
            f"{scheme}://{target.authority}{target.path_with_query}",
            tuple(headers),
            request.body,
            request.timeout_ms,
        )
        self.sent.append(sent)
        if self.answer_http is None:
            raise _http.HTTPError(
                "denied",
                f"request to `{target.authority}` denied: the host is not granted to this provider",
            )
        return self.answer_http(sent)


@contextlib.contextmanager
def use_host(fake: FakeHost | None = None) -> Iterator[FakeHost]:
    """Makes `fake` (a new `FakeHost` when None) the host inside the `with` block, and the
    previous one again after it."""
    fake = fake or FakeHost()
    previous = _host.current
    _host.current = fake
    try:
        yield fake
    finally:
        _host.current = previous
