//! Large components for tests and benchmarks: a real built component grown with a custom
//! section, the way a Python provider carries its interpreter and libraries.

use wasm_encoder::{ComponentSection, CustomSection};

/// `component` with a custom section named `name` appended, so the whole is at least
/// `total_len` bytes. The data is a deterministic pattern; runtimes ignore custom sections,
/// so the component still loads and behaves as before.
pub fn with_padding(component: &[u8], name: &str, total_len: usize) -> Vec<u8> {
    let pad = total_len.saturating_sub(component.len());
    let data: Vec<u8> = (0..pad as u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8)
        .collect();
    let mut out = component.to_vec();
    CustomSection {
        name: name.into(),
        data: data.into(),
    }
    .append_to_component(&mut out);
    out
}
