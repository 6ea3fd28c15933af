//! `capw_api::parse_manifests` on arbitrary text.
//!
//! # Checks
//!
//! - Parsing never panics, whatever the text; an error prints.
//! - Every object parsed encodes to JSON.
//! - The round trip `write_manifests` documents: written back and parsed again, the objects
//!   are the same.

#![no_main]

use capw_api::{parse_manifests, write_manifests};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
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
});
