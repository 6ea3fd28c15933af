"""The subset of JSON Schema (draft 2020-12) the SDK checks a config against, with every
problem at the JSON Pointer of the value that caused it.

The host checks a config against the full schema before it calls `validate-config`; the SDK
checks it again, inside the component, so that `validate-config` and every call see the
config the host saw, with the defaults applied. No complete pure-Python validator runs inside
a component without packages from the network (the well-kept `jsonschema` needs `rpds-py`, a
native extension), so this module checks the subset below, and `check_schema` refuses a
schema that uses any other keyword, so that a schema never says more than the SDK enforces:

- assertions: `type` (a name or a list of names; `integer` takes `2.0` as JSON does),
  `enum`, `const`, `minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum`,
  `multipleOf`, `minLength`, `maxLength`, `pattern` (Python's `re.search`: write patterns in
  the part of the syntax ECMA-262 and Python share), `items` (one schema for every element),
  `minItems`, `maxItems`, `uniqueItems`, `properties`, `required`, `additionalProperties`
  (`false` or a schema), `minProperties`, `maxProperties`, `$ref` to `#` or `#/$defs/NAME`;
- applied: `default`, for a property that is absent (nested objects included);
- annotations, read and not checked: `$schema`, `$id`, `$comment`, `$defs`, `title`,
  `description`, `examples`, `deprecated`, `readOnly`, `writeOnly`, `format`.

Lengths count code points, as the specification asks. An unknown field (a property that
`additionalProperties: false` forbids) is reported at its own pointer; a missing required
field at the object that lacks it, naming the field.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from copy import deepcopy
from typing import Any

from .metadata import FieldError, pointer

#: Keywords whose rule `validate` enforces.
ASSERTIONS = frozenset(
    {
        "type",
        "enum",
        "const",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "minLength",
        "maxLength",
        "pattern",
        "items",
        "minItems",
        "maxItems",
        "uniqueItems",
        "properties",
        "required",
        "additionalProperties",
        "minProperties",
        "maxProperties",
        "$ref",
    }
)
#: Keywords that say something without constraining the config (`default` is applied).
ANNOTATIONS = frozenset(
    {
        "$schema",
        "$id",
        "$comment",
        "$defs",
        "title",
        "description",
        "examples",
        "default",
        "deprecated",
        "readOnly",
        "writeOnly",
        "format",
        # capw's own: a property that does not shape a machine (contract.md, config-schema).
        "x-capw-shapes-machine",
    }
)
TYPES = frozenset({"null", "boolean", "object", "array", "number", "integer", "string"})


class SchemaError(ValueError):
    """A config schema the SDK cannot check: a keyword outside the subset, a malformed value,
    a `$ref` that resolves to nothing. A provider's bug, found by its unit tests."""


def check_schema(schema: Any, root: dict[str, Any] | None = None, at: str = "#") -> None:
    """Checks that `schema` uses only the keywords this module enforces, with values of the
    right kind, and that every `$ref` resolves.

    Raises `SchemaError` naming the keyword and where it is.
    """
    if isinstance(schema, bool):
        return
    if not isinstance(schema, dict):
        raise SchemaError(f"{at}: a schema is an object or a boolean")
    root = schema if root is None else root
    for keyword, value in schema.items():
        where = f"{at}/{keyword}"
        if keyword not in ASSERTIONS and keyword not in ANNOTATIONS:
            raise SchemaError(
                f"{where}: keyword `{keyword}` is not one capw.schema checks; see its docs for"
                " the subset"
            )
        if keyword == "type":
            names = value if isinstance(value, list) else [value]
            if not names or any(n not in TYPES for n in names):
                raise SchemaError(f"{where}: unknown type {value!r}")
        elif keyword in ("properties", "$defs"):
            if not isinstance(value, dict):
                raise SchemaError(f"{where}: must be an object")
            for name, sub in value.items():
                check_schema(sub, root, f"{where}/{name}")
        elif keyword in ("items", "additionalProperties"):
            check_schema(value, root, where)
        elif keyword == "required":
            if not isinstance(value, list) or not all(isinstance(n, str) for n in value):
                raise SchemaError(f"{where}: must be a list of names")
        elif keyword == "pattern":
            try:
                re.compile(value)
            except (re.error, TypeError) as e:
                raise SchemaError(f"{where}: {e}") from e
        elif keyword == "$ref":
            resolve(root, value, where)
        elif keyword == "enum" and not isinstance(value, list):
            raise SchemaError(f"{where}: must be a list")
        elif keyword in (
            "minimum",
            "maximum",
            "exclusiveMinimum",
            "exclusiveMaximum",
            "multipleOf",
        ):
            if not is_number(value):
                raise SchemaError(f"{where}: must be a number")
        elif keyword in (
            "minLength",
            "maxLength",
            "minItems",
            "maxItems",
            "minProperties",
            "maxProperties",
        ):
            if not is_integer(value) or value < 0:
                raise SchemaError(f"{where}: must be a non-negative integer")


def resolve(root: dict[str, Any], ref: Any, where: str = "$ref") -> Any:
    """The schema `ref` (`#/$defs/NAME`, or `#` for the root) names in `root`."""
    if ref == "#":
        return root
    prefix = "#/$defs/"
    if not isinstance(ref, str) or not ref.startswith(prefix):
        raise SchemaError(
            f"{where}: only `#` and `#/$defs/NAME` references are supported, not {ref!r}"
        )
    name = ref[len(prefix) :].replace("~1", "/").replace("~0", "~")
    target = root.get("$defs", {}).get(name)
    if target is None:
        raise SchemaError(f"{where}: {ref} resolves to nothing")
    return target


def validate(schema: Any, document: Any) -> list[FieldError]:
    """Every problem `schema` finds in `document`, in document order, each at its pointer.

    Raises `SchemaError` when the schema is outside the subset (see `check_schema`).
    """
    check_schema(schema)
    return list(_problems(schema, schema, document, ""))


def _problems(root: Any, schema: Any, value: Any, at: str) -> Iterator[FieldError]:
    if schema is True:
        return
    if schema is False:
        yield FieldError(at, "no value is allowed here")
        return
    if "$ref" in schema:
        yield from _problems(root, resolve(root, schema["$ref"]), value, at)
    if "type" in schema:
        names = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        if not any(has_type(value, n) for n in names):
            yield FieldError(
                at, f"must be {' or '.join(_article(n) for n in names)}, not {kind_of(value)}"
            )
            return
    if "const" in schema and not json_equal(value, schema["const"]):
        yield FieldError(at, f"must be {json.dumps(schema['const'])}")
    if "enum" in schema and not any(json_equal(value, o) for o in schema["enum"]):
        yield FieldError(at, "must be one of " + ", ".join(json.dumps(o) for o in schema["enum"]))
    if is_number(value):
        yield from _number(schema, value, at)
    if isinstance(value, str):
        yield from _string(schema, value, at)
    if isinstance(value, list):
        yield from _array(root, schema, value, at)
    if isinstance(value, dict):
        yield from _object(root, schema, value, at)


def _number(schema: dict[str, Any], value: float, at: str) -> Iterator[FieldError]:
    if "minimum" in schema and value < schema["minimum"]:
        yield FieldError(at, f"must be at least {schema['minimum']}; got {_show(value)}")
    if "maximum" in schema and value > schema["maximum"]:
        yield FieldError(at, f"must be at most {schema['maximum']}; got {_show(value)}")
    if "exclusiveMinimum" in schema and value <= schema["exclusiveMinimum"]:
        yield FieldError(at, f"must be above {schema['exclusiveMinimum']}; got {_show(value)}")
    if "exclusiveMaximum" in schema and value >= schema["exclusiveMaximum"]:
        yield FieldError(at, f"must be below {schema['exclusiveMaximum']}; got {_show(value)}")
    step = schema.get("multipleOf")
    if step and not math.isclose(value / step, round(value / step), rel_tol=0, abs_tol=1e-9):
        yield FieldError(at, f"must be a multiple of {step}; got {_show(value)}")


def _string(schema: dict[str, Any], value: str, at: str) -> Iterator[FieldError]:
    if "minLength" in schema and len(value) < schema["minLength"]:
        yield FieldError(at, f"must be at least {schema['minLength']} characters long")
    if "maxLength" in schema and len(value) > schema["maxLength"]:
        yield FieldError(at, f"must be at most {schema['maxLength']} characters long")
    if "pattern" in schema and not re.search(schema["pattern"], value):
        yield FieldError(at, f"must match {schema['pattern']}")


def _array(root: Any, schema: dict[str, Any], value: list, at: str) -> Iterator[FieldError]:
    if "minItems" in schema and len(value) < schema["minItems"]:
        yield FieldError(at, f"must have at least {schema['minItems']} items")
    if "maxItems" in schema and len(value) > schema["maxItems"]:
        yield FieldError(at, f"must have at most {schema['maxItems']} items")
    unique = schema.get("uniqueItems", False)
    for i, item in enumerate(value):
        where = f"{at}{pointer(i)}"
        if "items" in schema:
            yield from _problems(root, schema["items"], item, where)
        if unique and any(json_equal(item, earlier) for earlier in value[:i]):
            yield FieldError(where, "is listed twice")


def _object(root: Any, schema: dict[str, Any], value: dict, at: str) -> Iterator[FieldError]:
    if "minProperties" in schema and len(value) < schema["minProperties"]:
        yield FieldError(at, f"must have at least {schema['minProperties']} fields")
    if "maxProperties" in schema and len(value) > schema["maxProperties"]:
        yield FieldError(at, f"must have at most {schema['maxProperties']} fields")
    for name in schema.get("required", ()):
        if name not in value:
            yield FieldError(at, f"missing required field `{name}`")
    properties = schema.get("properties", {})
    extra = schema.get("additionalProperties", True)
    for name, item in value.items():
        where = f"{at}{pointer(name)}"
        if name in properties:
            yield from _problems(root, properties[name], item, where)
        elif extra is False:
            yield FieldError(where, "unknown field")
        else:
            yield from _problems(root, extra, item, where)


def apply_defaults(schema: Any, document: Any, root: Any = None) -> Any:
    """A copy of `document` with the `default` of every absent property filled in, in nested
    objects too. `document` must have passed `validate`."""
    root = schema if root is None else root
    if not isinstance(schema, dict) or not isinstance(document, dict):
        return document
    if "$ref" in schema:
        document = apply_defaults(resolve(root, schema["$ref"]), document, root)
    filled = dict(document)
    for name, sub in schema.get("properties", {}).items():
        if isinstance(sub, dict) and name not in filled and "default" in sub:
            filled[name] = deepcopy(sub["default"])
        if name in filled:
            filled[name] = apply_defaults(sub, filled[name], root)
    return filled


# ---- JSON values ---------------------------------------------------------------------------


def is_number(value: Any) -> bool:
    """A JSON number: an int or float, never a bool."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def is_integer(value: Any) -> bool:
    """A JSON integer: `2` and `2.0` alike."""
    return is_number(value) and (isinstance(value, int) or float(value).is_integer())


def has_type(value: Any, name: str) -> bool:
    """Whether `value` is of the JSON Schema type `name`."""
    return {
        "null": value is None,
        "boolean": isinstance(value, bool),
        "object": isinstance(value, dict),
        "array": isinstance(value, list),
        "number": is_number(value),
        "integer": is_integer(value),
        "string": isinstance(value, str),
    }[name]


def json_equal(a: Any, b: Any) -> bool:
    """Equality of JSON values: `1` equals `1.0`, but `true` is not `1`."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if is_number(a) and is_number(b):
        return a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def kind_of(value: Any) -> str:
    """How a value is named in a field error: `a string`, `the integer 5`."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if is_integer(value):
        return f"the integer {_show(value)}"
    if is_number(value):
        return f"the number {value}"
    if isinstance(value, str):
        return "a string"
    return "an array" if isinstance(value, list) else "an object"


def _article(name: str) -> str:
    return {
        "null": "null",
        "integer": "an integer",
        "object": "an object",
        "array": "an array",
    }.get(name, f"a {name}")


def _show(value: float) -> str:
    return str(int(value)) if is_integer(value) else str(value)
