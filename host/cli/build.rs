//! Rebuilds `capw` when a starter's template or an SDK it copies into starters changes: they
//! are embedded with `include_dir!`, which cargo does not track by itself.

fn main() {
    for dir in [
        "templates",
        "../../sdk/go",
        "../../sdk/python",
        "../../sdk/js",
    ] {
        println!("cargo:rerun-if-changed={dir}");
    }
}
