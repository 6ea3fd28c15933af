#!/usr/bin/env bash
# The per-language figures of docs/performance.md: the bootstrap starter of `capw plugin new`
# (the same logic in every language) built in Rust, Go, Python, JavaScript and C, then
# `capw bench languages` over the five components, side by side in one run.
#   scripts/bench-languages.sh CAPW TARGET_DIR [bench args...]
# CAPW is the capw binary (`make bench-languages` passes the release build); the starters are
# written and built under TARGET_DIR/bench-languages with the toolchains of `make toolchains`.
set -euo pipefail
capw="$1"; target="$2"; shift 2
here="$(cd "$(dirname "$0")/.." && pwd)"
work="$target/bench-languages"
rm -rf "$work" && mkdir -p "$work"
set -a; source "$target/toolchains.env"; set +a
components=()
for lang in rust go python js c; do
    dir="$work/$lang"
    "$capw" plugin new "bench-$lang" --lang "$lang" --point bootstrap --dir "$dir" --sdk "$here/sdk" >/dev/null
    started=$(date +%s%N)
    if [ "$lang" = rust ]; then
        (cd "$dir" && CARGO_TARGET_DIR="$target/scaffold" cargo build -q --profile plugin --target wasm32-wasip2)
        cp "$target/scaffold/wasm32-wasip2/plugin/bench_rust.wasm" "$dir/provider.wasm"
    else
        make -s -C "$dir" OUT=provider.wasm >/dev/null
    fi
    ms=$(( ($(date +%s%N) - started) / 1000000 ))
    printf '%-7s built in %d.%03d s\n' "$lang" $((ms / 1000)) $((ms % 1000)) >&2
    components+=(--component "$lang=$dir/provider.wasm")
done
"$capw" bench languages "${components[@]}" "$@"
