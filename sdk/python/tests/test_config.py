"""capw.config and capw.schema: the schema subset, field errors at JSON Pointers, defaults,
the dataclass."""

from __future__ import annotations

import enum
import unittest
from dataclasses import dataclass, field

from capw import FieldError
from capw.config import ConfigError, parse, pointer
from capw.schema import SchemaError, check_schema, validate


class Size(enum.Enum):
    SMALL = "small"
    LARGE = "large"


@dataclass(frozen=True)
class Network:
    cidr: str
    zones: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Config:
    network: Network
    size: Size = Size.SMALL
    max_machines: int = 3
    labels: dict[str, str] = field(default_factory=dict)
    dns_name: str | None = field(default=None, metadata={"json": "dns-name"})


SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "additionalProperties": False,
    "required": ["network"],
    "properties": {
        "network": {"$ref": "#/$defs/Network"},
        "size": {"enum": ["small", "large"], "default": "small"},
        "maxMachines": {"type": "integer", "minimum": 1, "maximum": 10, "default": 3},
        "labels": {"type": "object", "additionalProperties": {"type": "string", "maxLength": 63}},
        "dns-name": {"type": ["string", "null"], "pattern": "^[a-z0-9.-]+$"},
    },
    "$defs": {
        "Network": {
            "type": "object",
            "additionalProperties": False,
            "required": ["cidr"],
            "properties": {
                "cidr": {"type": "string", "minLength": 9},
                "zones": {
                    "type": "array",
                    "items": {"type": "string"},
                    "uniqueItems": True,
                    "default": [],
                },
            },
        }
    },
}


def errors(text: str) -> list[FieldError]:
    try:
        parse(Config, SCHEMA, text)
    except ConfigError as e:
        return e.errors
    return []


class PointerTest(unittest.TestCase):
    def test_pointers_escape_tilde_and_slash(self):
        self.assertEqual(pointer("a/b", "m~n", 0), "/a~1b/m~0n/0")
        self.assertEqual(pointer(), "")


class ParseTest(unittest.TestCase):
    def test_a_config_parses_into_the_dataclass_with_defaults_applied(self):
        parsed = parse(
            Config, SCHEMA, '{"network": {"cidr": "10.0.0.0/16"}, "dns-name": "c1.test"}'
        )
        self.assertEqual(parsed, Config(Network("10.0.0.0/16", []), Size.SMALL, 3, {}, "c1.test"))
        parsed = parse(
            Config,
            SCHEMA,
            '{"network": {"cidr": "10.0.0.0/16", "zones": ["a"]}, "size": "large", '
            '"maxMachines": 2.0}',
        )
        self.assertEqual(
            (parsed.network.zones, parsed.size, parsed.max_machines), (["a"], Size.LARGE, 2)
        )
        self.assertIsInstance(parsed.max_machines, int)

    def test_a_type_error_points_at_the_field(self):
        self.assertEqual(
            errors('{"network": {"cidr": 5}}'),
            [FieldError("/network/cidr", "must be a string, not the integer 5")],
        )

    def test_an_error_in_a_list_or_map_points_at_the_element(self):
        found = errors(
            '{"network": {"cidr": "10.0.0.0/16", "zones": ["a", "b", 3, "a"]}, "labels": {"a/b": "'
            + "x" * 64
            + '"}}'
        )
        self.assertEqual(
            [e.path for e in found], ["/network/zones/2", "/network/zones/3", "/labels/a~1b"]
        )

    def test_an_unknown_field_is_reported_at_its_own_pointer(self):
        self.assertEqual(
            errors('{"network": {"cidr": "10.0.0.0/16", "extra": 1}, "other": true}'),
            [FieldError("/network/extra", "unknown field"), FieldError("/other", "unknown field")],
        )

    def test_a_missing_field_is_reported_at_its_parent(self):
        self.assertEqual(
            errors('{"network": {}}'), [FieldError("/network", "missing required field `cidr`")]
        )
        self.assertEqual(errors("{}"), [FieldError("", "missing required field `network`")])

    def test_every_problem_is_reported_in_document_order(self):
        found = errors(
            '{"network": {"cidr": "short"}, "size": "huge", "maxMachines": 11, "dns-name": "UPPER"}'
        )
        self.assertEqual(
            [e.path for e in found], ["/network/cidr", "/size", "/maxMachines", "/dns-name"]
        )
        self.assertEqual(found[1].message, 'must be one of "small", "large"')
        self.assertEqual(found[2].message, "must be at most 10; got 11")
        self.assertEqual(found[3].message, "must match ^[a-z0-9.-]+$")

    def test_what_json_does_not_allow_is_refused_at_the_document(self):
        for text in ("{", "NaN", '{"network": {"cidr": Infinity}}', ""):
            with self.subTest(text):
                found = errors(text)
                self.assertEqual([e.path for e in found], [""])
                self.assertTrue(found[0].message.startswith("not JSON"), found[0].message)
        self.assertEqual(errors("[]"), [FieldError("", "must be an object, not an array")])

    def test_booleans_are_not_numbers_and_numbers_not_booleans(self):
        self.assertEqual(
            [e.path for e in errors('{"network": {"cidr": "10.0.0.0/16"}, "maxMachines": true}')],
            ["/maxMachines"],
        )
        self.assertEqual(validate({"enum": [1]}, True), [FieldError("", "must be one of 1")])
        self.assertEqual(validate({"const": False}, 0), [FieldError("", "must be false")])

    def test_the_config_error_names_the_first_problem_and_counts_the_rest(self):
        with self.assertRaises(ConfigError) as refused:
            parse(Config, SCHEMA, '{"network": {"cidr": 5}, "size": 1}')
        self.assertEqual(
            str(refused.exception),
            "config at `/network/cidr`: must be a string, not the integer 5 (and 1 more)",
        )

    def test_without_a_dataclass_the_checked_json_is_the_config(self):
        self.assertEqual(
            parse(None, {"type": "object", "properties": {"a": {"default": 1}}}, "{}"), {"a": 1}
        )


class SchemaTest(unittest.TestCase):
    def test_the_subset_is_accepted(self):
        check_schema(SCHEMA)
        check_schema(True)

    def test_capws_own_annotation_is_read_past(self):
        # A field that shapes no machine (contract.md, config-schema).
        check_schema(
            {"type": "object", "properties": {"timeout": {"type": "integer", "x-capw-shapes-machine": False}}}
        )

    def test_a_keyword_outside_the_subset_is_refused_naming_it(self):
        for schema, where in (
            ({"oneOf": [{"type": "string"}]}, "#/oneOf"),
            ({"properties": {"a": {"if": {}}}}, "#/properties/a/if"),
            ({"type": "float"}, "#/type"),
            ({"$ref": "#/definitions/A"}, "#/$ref"),
            ({"$ref": "#/$defs/Missing"}, "#/$ref"),
            ({"pattern": "("}, "#/pattern"),
        ):
            with self.subTest(schema), self.assertRaises(SchemaError) as refused:
                check_schema(schema)
            self.assertTrue(str(refused.exception).startswith(where), str(refused.exception))


if __name__ == "__main__":
    unittest.main()
