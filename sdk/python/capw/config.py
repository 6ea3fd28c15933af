"""A provider's config: checked against its JSON Schema (the subset `capw.schema` checks),
defaults applied, parsed into its dataclass, with every problem at the JSON Pointer of the
field that caused it.

Paths are JSON Pointers (RFC 6901): `""` is the whole document, `/network/cidr` a field,
`/zones/2` the third element of a list; `~` and `/` inside a key are written `~0` and `~1`.

# From JSON to the dataclass

Each field of the config dataclass takes the JSON member named by its metadata
(`field(metadata={"json": "max-surge"})`), else its name in camelCase (`max_surge` ->
`maxSurge`). A field typed as another dataclass, `list[...]`, `dict[str, ...]`,
`Optional[...]` (or `X | None`) or an `Enum` (by value) is converted on the way; anything else
is taken as the JSON gave it.
"""

from __future__ import annotations

import dataclasses
import enum
import json
import types
import typing
from typing import Any, Union

from .metadata import FieldError, pointer
from .schema import SchemaError, apply_defaults, is_integer, is_number, kind_of, validate

__all__ = [
    "EMPTY_SCHEMA",
    "ConfigError",
    "SchemaError",
    "convert",
    "json_name",
    "loads",
    "parse",
    "pointer",
]

#: The schema of a provider without config: the empty object only.
EMPTY_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "additionalProperties": False,
}


class ConfigError(ValueError):
    """A config refused: every problem found, each at its field's JSON Pointer.

    Raised from a call, it is answered as a permanent `invalid-input` error naming the first
    problem; from `validate-config`, every problem is answered.
    """

    def __init__(self, errors: list[FieldError]) -> None:
        self.errors = errors
        first = errors[0] if errors else FieldError("", "refused")
        where = f" at `{first.path}`" if first.path else ""
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        super().__init__(f"config{where}: {first.message}{more}")


def loads(text: str) -> Any:
    """`text` as JSON, refusing what JSON does not allow and Python's reader does (`NaN`,
    `Infinity`).

    Raises `ConfigError` at `""`.
    """

    def refuse(constant: str) -> Any:
        raise ValueError(f"{constant} is not JSON")

    try:
        return json.loads(text, parse_constant=refuse)
    except ValueError as e:
        raise ConfigError([FieldError("", f"not JSON: {e}")]) from e


def parse(config_type: type | None, schema: dict[str, Any], text: str) -> Any:
    """The config `text` checked against `schema`, with its defaults applied, as an instance
    of the dataclass `config_type` (the JSON value itself when `config_type` is None).

    Raises `ConfigError` with every problem the schema finds, or the one that stopped the
    conversion into the dataclass.
    """
    document = loads(text)
    errors = validate(schema, document)
    if errors:
        raise ConfigError(errors)
    document = apply_defaults(schema, document)
    if config_type is None:
        return document
    return convert(config_type, document, "")


def json_name(f: dataclasses.Field) -> str:
    """The JSON member a dataclass field reads: its `json` metadata, else its camelCase name."""
    named = f.metadata.get("json")
    if named:
        return named
    head, *rest = f.name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def convert(target: Any, value: Any, at: str) -> Any:
    """`value` (checked JSON) as `target`, a type annotation. Raises `ConfigError` at `at`
    when the value does not fit: the schema and the dataclass disagree."""
    origin = typing.get_origin(target)
    args = typing.get_args(target)
    if target is Any or target is object:
        return value
    if origin is Union or origin is types.UnionType:
        if value is None and type(None) in args:
            return None
        options = [a for a in args if a is not type(None)]
        if len(options) == 1:
            return convert(options[0], value, at)
        return value
    if dataclasses.is_dataclass(target) and isinstance(target, type):
        if not isinstance(value, dict):
            raise _mismatch(at, f"an object for {target.__name__}", value)
        hints = typing.get_type_hints(target)
        given: dict[str, Any] = {}
        known = set()
        for f in dataclasses.fields(target):
            if not f.init:
                continue
            name = json_name(f)
            known.add(name)
            if name in value:
                given[f.name] = convert(hints.get(f.name, Any), value[name], f"{at}{pointer(name)}")
            elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                raise ConfigError([FieldError(at, f"missing required field `{name}`")])
        for name in value:
            if name not in known:
                raise ConfigError([FieldError(f"{at}{pointer(name)}", "unknown field")])
        return target(**given)
    if origin in (list, tuple) or target in (list, tuple):
        if not isinstance(value, list):
            raise _mismatch(at, "an array", value)
        item = args[0] if args else Any
        items = [convert(item, v, f"{at}{pointer(i)}") for i, v in enumerate(value)]
        return tuple(items) if (origin or target) is tuple else items
    if origin is dict or target is dict:
        if not isinstance(value, dict):
            raise _mismatch(at, "an object", value)
        item = args[1] if len(args) == 2 else Any
        return {k: convert(item, v, f"{at}{pointer(k)}") for k, v in value.items()}
    if isinstance(target, type) and issubclass(target, enum.Enum):
        try:
            return target(value)
        except ValueError:
            raise ConfigError(
                [FieldError(at, f"must be one of {[m.value for m in target]}")]
            ) from None
    if target is bool and not isinstance(value, bool):
        raise _mismatch(at, "a boolean", value)
    if target is int:
        if not is_integer(value):
            raise _mismatch(at, "an integer", value)
        return int(value)
    if target is float:
        if not is_number(value):
            raise _mismatch(at, "a number", value)
        return float(value)
    if target is str and not isinstance(value, str):
        raise _mismatch(at, "a string", value)
    return value


def _mismatch(at: str, wanted: str, value: Any) -> ConfigError:
    return ConfigError([FieldError(at, f"must be {wanted}, not {kind_of(value)}")])
