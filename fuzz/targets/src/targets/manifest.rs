//! `capw_api::parse_manifests` on arbitrary text.
//!
//! # Checks
//!
//! - Parsing never panics, whatever the text; an error prints.
//! - Every object parsed encodes to JSON.
//! - The round trip `write_manifests` documents: written back and parsed again, the objects
//!   are the same.

use capw_api::{parse_manifests, write_manifests};

use super::{Replayed, decode};

/// Decodes `bytes` as libFuzzer's entry does (the longest UTF-8 prefix) and runs [`run`].
pub fn replay(bytes: &[u8]) -> Replayed {
    let Some(text) = decode::<&str>(bytes) else {
        return Replayed::Rejected;
    };
    run(text);
    Replayed::Ran
}

/// The target: `text` parsed, encoded, written back and parsed again.
///
/// # Panics
///
/// When a check of the module's documentation fails.
pub fn run(text: &str) {
    let objects = match parse_manifests(text) {
        Ok(objects) => objects,
        Err(error) => {
            let _ = error.to_string();
            return;
        }
    };
    for object in &objects {
        let _ = (object.kind(), object.name(), object.namespace());
        if let Err(error) = object.to_json() {
            panic!("a parsed {} does not encode: {error}", object.kind());
        }
    }
    let written = match write_manifests(&objects) {
        Ok(written) => written,
        Err(error) => panic!("parsed objects do not write back: {error}"),
    };
    match parse_manifests(&written) {
        Ok(again) => assert_eq!(again, objects, "round trip changed the objects:\n{written}"),
        Err(error) => panic!("written manifests do not parse: {error}\n{written}"),
    }
}
