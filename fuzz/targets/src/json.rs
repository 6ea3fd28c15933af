//! JSON values and JSON Schemas from fuzz bytes, bounded in depth and width.
//!
//! Keys and strings come mostly from [`WORDS`], the words schemas, configs and the
//! quickstart's patches use, so that generated schemas, values and patch paths meet each
//! other instead of missing by one random byte.

use arbitrary::{Result, Unstructured};
use serde_json::{Map, Number, Value};

/// Nesting limit of generated values and schemas.
pub const MAX_DEPTH: usize = 5;

/// Most entries of a generated array or object.
const MAX_WIDTH: usize = 5;

/// Object keys and strings that schemas, configs and patches of the quickstart share.
pub const WORDS: &[&str] = &[
    "a",
    "b",
    "endpoint",
    "podSubnet",
    "keyAlgorithm",
    "simcloudEndpoint",
    "net",
    "mtu",
    "cidr",
    "size",
    "labels",
    "items",
    "0",
    "1",
    "-",
    "",
    "x/y",
    "t~n",
    "builtin",
    "cluster",
    "name",
    "ecdsa-p256",
    "rsa-2048",
    "http://127.0.0.1:7480",
    "192.168.0.0/16",
    "10.244.0.0/16",
    "v1.34.4",
];

/// Regular expressions for `pattern`: valid ones, ones the validator must refuse, and ones
/// that are costly to match.
const PATTERNS: &[&str] = &[
    "^[a-z]+$",
    "^[0-9./]+$",
    "^(rsa|ecdsa)-[0-9a-z]+$",
    "(",
    "[",
    "a{1000}",
    "(a+)+$",
    "\\p{L}+",
    "(?=a)b",
    "\\1",
    "",
];

const FORMATS: &[&str] = &[
    "ipv4",
    "ipv6",
    "hostname",
    "uri",
    "date-time",
    "email",
    "regex",
    "uuid",
    "int-or-string",
    "cidr",
];

const TYPES: &[&str] = &[
    "string", "integer", "number", "boolean", "object", "array", "null", "strung",
];

const REFS: &[&str] = &[
    "#",
    "#/properties/a",
    "#/definitions/a",
    "#/$defs/a",
    "#/items",
    "#/nowhere",
    "http://capw.invalid/schema.json",
    "other.json#/a",
];

const DRAFTS: &[&str] = &[
    "http://json-schema.org/draft-04/schema#",
    "http://json-schema.org/draft-07/schema#",
    "https://json-schema.org/draft/2019-09/schema",
    "https://json-schema.org/draft/2020-12/schema",
    "https://capw.invalid/unknown-draft",
];

/// A string: mostly one of [`WORDS`], sometimes any text.
pub fn text(u: &mut Unstructured<'_>) -> Result<String> {
    if u.ratio(3, 4)? {
        Ok((*u.choose(WORDS)?).to_owned())
    } else {
        u.arbitrary()
    }
}

/// A number: small integers mostly, then the edges (`u64::MAX`, `i64::MIN`, fractions,
/// `-0.0`, 1e308).
pub fn number(u: &mut Unstructured<'_>) -> Result<Number> {
    Ok(match u.int_in_range(0..=5)? {
        0 | 1 => Number::from(u.int_in_range(-3i64..=1500)?),
        2 => Number::from(u.arbitrary::<i64>()?),
        3 => Number::from(u.arbitrary::<u64>()?),
        4 => Number::from_f64(*u.choose(&[0.5, -0.0, 1e308, -1e-300, 0.1, 3.0])?)
            .unwrap_or_else(|| Number::from(0)),
        _ => Number::from_f64(u.arbitrary::<f64>()?).unwrap_or_else(|| Number::from(1)),
    })
}

/// Any JSON value, nested at most `depth` deep.
pub fn value(u: &mut Unstructured<'_>, depth: usize) -> Result<Value> {
    let last = if depth == 0 { 3 } else { 5 };
    Ok(match u.int_in_range(0..=last)? {
        0 => Value::Null,
        1 => Value::Bool(u.arbitrary()?),
        2 => Value::Number(number(u)?),
        3 => Value::String(text(u)?),
        4 => {
            let len = u.int_in_range(0..=MAX_WIDTH)?;
            Value::Array(
                (0..len)
                    .map(|_| value(u, depth - 1))
                    .collect::<Result<_>>()?,
            )
        }
        _ => Value::Object(object(u, depth - 1)?),
    })
}

/// A JSON object, its values nested at most `depth` deep.
pub fn object(u: &mut Unstructured<'_>, depth: usize) -> Result<Map<String, Value>> {
    let len = u.int_in_range(0..=MAX_WIDTH)?;
    let mut map = Map::new();
    for _ in 0..len {
        map.insert(text(u)?, value(u, depth)?);
    }
    Ok(map)
}

/// A JSON Schema object (also read as an OpenAPI v3 schema): a few keywords with values of
/// the right shape mostly, of a wrong one sometimes; subschemas nested at most `depth` deep.
pub fn schema(u: &mut Unstructured<'_>, depth: usize) -> Result<Map<String, Value>> {
    let mut map = Map::new();
    let keywords = u.int_in_range(0..=5)?;
    for _ in 0..keywords {
        let (key, keyword) = schema_keyword(u, depth)?;
        map.insert(key.to_owned(), keyword);
    }
    Ok(map)
}

/// A subschema: mostly an object, sometimes `true` / `false`, nothing past `depth`.
fn subschema(u: &mut Unstructured<'_>, depth: usize) -> Result<Value> {
    if depth == 0 || u.ratio(1, 8)? {
        return Ok(Value::Bool(u.arbitrary()?));
    }
    Ok(Value::Object(schema(u, depth - 1)?))
}

fn subschemas(u: &mut Unstructured<'_>, depth: usize) -> Result<Value> {
    let len = u.int_in_range(0..=3)?;
    Ok(Value::Array(
        (0..len)
            .map(|_| subschema(u, depth))
            .collect::<Result<_>>()?,
    ))
}

fn named_subschemas(u: &mut Unstructured<'_>, depth: usize) -> Result<Value> {
    let len = u.int_in_range(0..=3)?;
    let mut map = Map::new();
    for _ in 0..len {
        map.insert(text(u)?, subschema(u, depth)?);
    }
    Ok(Value::Object(map))
}

fn word_list(u: &mut Unstructured<'_>) -> Result<Value> {
    let len = u.int_in_range(0..=3)?;
    Ok(Value::Array(
        (0..len)
            .map(|_| text(u).map(Value::String))
            .collect::<Result<_>>()?,
    ))
}

fn count(u: &mut Unstructured<'_>) -> Result<Value> {
    Ok(match u.int_in_range(0..=3)? {
        0..=1 => Value::from(u.int_in_range(0u64..=4)?),
        2 => Value::from(u.arbitrary::<i64>()?),
        _ => Value::Number(number(u)?),
    })
}

fn schema_keyword(u: &mut Unstructured<'_>, depth: usize) -> Result<(&'static str, Value)> {
    Ok(match u.int_in_range(0..=33)? {
        0..=3 => ("type", Value::from(*u.choose(TYPES)?)),
        4 => (
            "type",
            Value::Array(vec![
                Value::from(*u.choose(TYPES)?),
                Value::from(*u.choose(TYPES)?),
            ]),
        ),
        5..=7 => ("properties", named_subschemas(u, depth)?),
        8 => ("required", word_list(u)?),
        9..=11 => ("default", value(u, 2)?),
        12 => ("enum", Value::Array(vec![value(u, 1)?, value(u, 1)?])),
        13 => ("items", subschema(u, depth)?),
        14 => ("additionalProperties", subschema(u, depth)?),
        15 => ("pattern", Value::from(*u.choose(PATTERNS)?)),
        16 => ("format", Value::from(*u.choose(FORMATS)?)),
        17 => (
            *u.choose(&["minimum", "maximum", "exclusiveMinimum", "multipleOf"])?,
            { Value::Number(number(u)?) },
        ),
        18 => (
            *u.choose(&[
                "minLength",
                "maxLength",
                "minItems",
                "maxItems",
                "minProperties",
            ])?,
            count(u)?,
        ),
        19 => (
            *u.choose(&[
                "uniqueItems",
                "nullable",
                "x-kubernetes-preserve-unknown-fields",
                "x-kubernetes-int-or-string",
                "exclusiveMaximum",
            ])?,
            Value::Bool(u.arbitrary()?),
        ),
        20 => (*u.choose(&["oneOf", "anyOf", "allOf", "prefixItems"])?, {
            subschemas(u, depth)?
        }),
        21 => (
            *u.choose(&[
                "not",
                "if",
                "then",
                "else",
                "contains",
                "propertyNames",
                "unevaluatedProperties",
                "unevaluatedItems",
            ])?,
            subschema(u, depth)?,
        ),
        22 => ("$ref", Value::from(*u.choose(REFS)?)),
        23 => (
            *u.choose(&["definitions", "$defs", "patternProperties"])?,
            { named_subschemas(u, depth)? },
        ),
        24 => ("const", value(u, 1)?),
        25 => ("$schema", Value::from(*u.choose(DRAFTS)?)),
        26 => (
            "$id",
            Value::from(*u.choose(&["#a", "http://capw.invalid/a", "a", ""])?),
        ),
        27 => ("dependentRequired", {
            let mut map = Map::new();
            map.insert(text(u)?, word_list(u)?);
            Value::Object(map)
        }),
        28 => ("description", Value::String(text(u)?)),
        // A keyword with a value of any shape, known or not.
        _ => (
            *u.choose(&[
                "type",
                "properties",
                "items",
                "required",
                "additionalProperties",
                "x-unknown",
                "$ref",
                "default",
            ])?,
            value(u, 2)?,
        ),
    })
}

/// A JSON pointer of up to four segments, mostly of [`WORDS`], sometimes malformed (no
/// leading `/`, a bare `~`).
pub fn pointer(u: &mut Unstructured<'_>) -> Result<String> {
    let mut out = String::new();
    if u.ratio(1, 16)? {
        return text(u);
    }
    let segments = u.int_in_range(0..=4)?;
    for _ in 0..segments {
        out.push('/');
        let segment = text(u)?;
        if u.ratio(1, 8)? {
            out.push_str(&segment);
        } else {
            out.push_str(&segment.replace('~', "~0").replace('/', "~1"));
        }
    }
    Ok(out)
}
