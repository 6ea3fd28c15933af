#!/usr/bin/env bash
# The runs behind `make demo`, `make check` and `make test`, ordered so that the waits overlap:
# what downloads or builds outside Rust (Debian packages, the Kubernetes binaries from their Go
# modules, the other languages' toolchains) goes on in the background while Rust compiles, and
# clippy runs inside the builds the tests need rather than as passes of its own.
#
#   scripts/suite.sh demo    the providers, the release build and the quickstart's Kubernetes
#                            version, then the quickstart's two clusters in the local mode
#   scripts/suite.sh check   the fast tier: fmt, clippy, and the tests of the host's crates, the
#                            runtime (hostile providers among them), local mode, Kubernetes mode
#                            against a real API server, admission and the faults
#   scripts/suite.sh test    every test of the project (what CI runs), then the docs' command
#                            examples (scripts/doc-examples.py)
#
# Every step's wall and CPU time goes to $TARGET_DIR/steps/ and is printed in a table at the end
# (scripts/step.py); the background steps' output goes to $TARGET_DIR/steps/logs/.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
what=${1:?usage: scripts/suite.sh demo|check|test}
export CARGO=${CARGO:-cargo}
target_dir=${CARGO_TARGET_DIR:-$root/target}
export CARGO_TARGET_DIR=$target_dir
plugin_target=wasm32-wasip2
export CAPW_PLUGIN_DIR=$target_dir/$plugin_target/plugin
# Workspace members that are provider components (built by the plugins step, not tested natively).
components=(capw-hostile-provider capw-broken-provider capw-broken-metadata-provider
	capw-hooks-v0-1-provider capw-hooks-v0-2-provider capw-fixed-control-plane-provider capw-scripted-hosted-provider)
# The Debian packages the suite uses: the OCI registry and its tools, the image's tools, the C
# example's compiler (clang, lld, wasi-libc), openssl for the Kubernetes test environment's
# certificates.
debian_packages=(docker-registry apache2-utils curl umoci skopeo file binutils ca-certificates
	clang lld wasi-libc libclang-rt-14-dev-wasm32 openssl)

steps_dir=$target_dir/steps
logs=$steps_dir/logs
mkdir -p "$logs"
[ "$what" = _run ] || export CAPW_STEPS=$steps_dir/$(date -u +%Y%m%dT%H%M%SZ)-$what.tsv
declare -A pids=()

step() {
	local name=$1
	shift
	"$root/scripts/step.py" "$name" -- "$@"
}

# A step in the background; `await NAME` waits for it and stops the run when it failed.
bg() {
	local name=$1
	shift
	# A process group of its own, so that a failed run stops it with everything it started.
	setsid "$root/scripts/step.py" "$name" -- "$@" >"$logs/$name.log" 2>&1 &
	pids[$name]=$!
	echo "== step $name: started in the background (output in $logs/$name.log)" >&2
}

await() {
	local name
	for name; do
		if ! wait "${pids[$name]}"; then
			echo "== step $name failed; the end of its output:" >&2
			tail -n 60 "$logs/$name.log" >&2
			exit 1
		fi
		unset "pids[$name]"
		tail -n 1 "$logs/$name.log" >&2
	done
}

finish() {
	local status=$?
	local pid
	for pid in "${pids[@]}"; do
		kill -- "-$pid" 2>/dev/null || true
	done
	"$root/scripts/step.py" --report || true
	exit "$status"
}
[ "$what" = _run ] || trap finish EXIT

# clippy inside the build: clippy-driver compiles the workspace's own crates (as rustc would) and
# lints them on the way, with the lints of the workspace's Cargo.toml and every warning an error.
# Every cargo command of a check or test run has it, so they all share one build.
clippy_in_builds() {
	RUSTC_WORKSPACE_WRAPPER=$(rustup which clippy-driver 2>/dev/null || command -v clippy-driver)
	export RUSTC_WORKSPACE_WRAPPER
	export CLIPPY_ARGS="-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__"
}

setup() {
	rustup target list --installed | grep -qx $plugin_target || rustup target add $plugin_target
}

debian() {
	local missing=() p sudo=""
	[ "$(id -u)" = 0 ] || sudo=sudo
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
	done
	((${#missing[@]})) || return 0
	echo "installing ${missing[*]} (apt)" >&2
	$sudo apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

# The Debian packages, the tools of the examples in other languages, then the examples.
tools_and_examples() {
	# Third-party tools are built as they are, not linted.
	unset RUSTC_WORKSPACE_WRAPPER CLIPPY_ARGS
	debian "${debian_packages[@]}"
	make --no-print-directory examples
}

# capw-node's end-to-end test (Go) against the Kubernetes binaries built from source.
go_node() {
	cd tests/kube-env
	CAPW_NODE_E2E_BIN_DIR=$(./kube-env.sh bin-dir) go test -count=1 ./node
}

# The fuzz targets' libFuzzer entries (fuzz/fuzz_targets/, a cargo workspace of its own, which
# only `make fuzz` builds) checked against the capw-fuzz functions they call: the corpus test
# compiles the targets' bodies, never the entries, so an entry left behind by a change of its
# body would otherwise go unnoticed until the next fuzzing run. `cargo check` links nothing, so
# libFuzzer is not compiled: CUSTOM_LIBFUZZER_PATH names a library that is never linked. Its
# own target directory beside `make fuzz`'s, which the next run reuses; not linted (`make
# clippy` leaves fuzz/ out too).
fuzz_entries() {
	unset RUSTC_WORKSPACE_WRAPPER CLIPPY_ARGS
	CARGO_TARGET_DIR=$target_dir/fuzz CUSTOM_LIBFUZZER_PATH=$target_dir/fuzz/never-linked/libfuzzer.a \
		$CARGO check --manifest-path fuzz/Cargo.toml --bins
}

# The SDKs' unit tests in other languages and their providers', natively (no wasm): Go with
# plain `go test` (toolchains.env's GOTOOLCHAIN is the Go scripts/toolchains.sh pins), Python
# with unittest (the SDK's component glue too, against the bindings toolchains.env's
# componentize-py generates for its world, in under a second), JavaScript with `node --test`;
# none fetches a package.
sdk_units() {
	(cd sdk/go && go test ./capw/ ./capwtest/ ./internal/dispatch/)
	(cd plugins/other-languages/go-sim-infra && go test ./siminfra/)
	make --no-print-directory -C sdk/python test-component
	make --no-print-directory -C plugins/other-languages/py-control-plane test
	make --no-print-directory -C sdk/js test
	make --no-print-directory -C plugins/other-languages/js-hooks test
}

test_args=(--workspace --features capw/simcloud "${components[@]/#/--exclude=}")

# The integration tests of the fast tier (`make check`); every package's unit tests run too. Left
# to `make test`: the crash campaigns (capw/crash, five minutes), the two modes' long
# scenarios (capw-kube/scenario), the local mode's day-two real boots (drain, etcd membership,
# remediation, join tokens: six minutes), the other languages, OCI interop, the deploy test, e2e.
check_tests=capw-api,capw-topology,capw-reconcile,capw-runtime,capw-engine,capw-store,capw-workload
check_tests+=,capw-local/local:quickstart::,capw-local/local:lifecycle::,capw-local/local:managed::
check_tests+=,capw-local/local:orphans::,capw-local/local:workload::,capw-local/local:faults::
check_tests+=,capw-local/hung,capw-kube/kube,capw-simcloud,capw-conformance,capw-sdk
check_tests+=,capw/cli:admission::,capw/cli:hostile_text::

# The image's capw: capw without the simulated cloud, from the test build. `--examples` keeps the
# dependencies' features those of the test build (dev-dependencies included), so only capw's own
# crate compiles again; its binary is kept aside before the test build puts back the one with
# the simulated cloud that the CLI's tests run.
image_binary() {
	local exe
	exe=$($CARGO build --workspace "${components[@]/#/--exclude=}" --bin capw --examples \
		--message-format=json-render-diagnostics |
		python3 -c 'import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == "capw" and m.get("executable"):
        print(m["executable"])')
	[ -n "$exe" ] || { echo "no capw binary in the build's output" >&2; return 1; }
	mkdir -p "$target_dir/image"
	cp "$exe" "$target_dir/image/capw.bin.new"
	mv "$target_dir/image/capw.bin.new" "$target_dir/image/capw.bin"
}

if [ "$what" = _run ]; then
	"${@:2}"
	exit
fi

case $what in
demo)
	# The Kubernetes version of the quickstart's clusters, the only one the demo runs.
	version=$(awk '$1 == "version:" { print $2; exit }' examples/quickstart/20-clusters.yaml)
	bg kube-env tests/kube-env/kube-env.sh build "$version"
	step setup "$0" _run setup
	step plugins $CARGO build --profile plugin --target $plugin_target \
		-p capw-kubeadm-control-plane -p capw-sim-infra -p capw-kubeadm-bootstrap
	# The test build's profile and dependency features (`--examples`, as for the image), so that
	# `make demo` and `make check`/`make test` share their dependencies' build: a release build
	# would be a second compile of everything for a demo whose time goes to booting clusters.
	step build $CARGO build --workspace "${components[@]/#/--exclude=}" --bin capw --examples \
		--features capw/simcloud
	await kube-env
	step apply "$target_dir/debug/capw" apply -f examples/quickstart
	step up "$target_dir/debug/capw" up
	;;
check | test)
	clippy_in_builds
	step fmt $CARGO fmt --all -- --check
	step setup "$0" _run setup
	bg kube-env tests/kube-env/kube-env.sh build
	if [ "$what" = test ]; then
		bg tools "$0" _run tools_and_examples
	else
		# openssl for the test environment's certificates; the OCI registry and its tools for
		# capw-kube/kube's registry credentials test.
		bg tools "$0" _run debian openssl docker-registry apache2-utils curl
	fi
	step plugins make --no-print-directory plugins
	if [ "$what" = test ]; then
		step image-binary "$0" _run image_binary
	fi
	# --timings: target/cargo-timings/ shows where the build went, crate by crate.
	step test-build scripts/run-tests.py --build-only -- --timings "${test_args[@]}"
	if [ "$what" = test ]; then
		# The debug build keeps what the two builds above use and nothing else: the units of
		# an earlier dependency or feature set go now, not after the week of the age rule. The
		# test build is listed last: Cargo links target/debug/capw to the binary of the last
		# build run, fresh or not, and the tests and the docs' examples run the one with the
		# simulated cloud.
		step prune scripts/prune-target.py "$target_dir" \
			--in-use "build --workspace ${components[*]/#/--exclude=} --bin capw --examples" \
			--in-use "test --no-run ${test_args[*]}"
		# While the background steps may still be going: a compile error, found before the
		# long run of the tests.
		step fuzz-entries "$0" _run fuzz_entries
	fi
	await tools kube-env
	if [ "$what" = test ]; then
		step image env CAPW_IMAGE_BINARY="$target_dir/image/capw.bin" scripts/image.sh build
		# capw-node's Go end-to-end tests and the docs' command examples (each README and
		# docs/ example run, its shown output compared) spend most of their two minutes
		# waiting on processes they started: beside the first minutes of the test binaries,
		# which run none of the binaries that compare timings (those run alone, last).
		bg go-node "$0" _run go_node
		bg docs env $(cat "$target_dir/toolchains.env") scripts/doc-examples.py
		step tests env $(cat "$target_dir/toolchains.env") scripts/run-tests.py -- "${test_args[@]}"
		await go-node docs
		step doctests $CARGO test --doc "${test_args[@]}"
		step sdk-units env $(cat "$target_dir/toolchains.env") "$0" _run sdk_units
	else
		# The fast tier builds no example in another language: the tests of one say so.
		step tests env CAPW_WITHOUT_EXAMPLES=1 scripts/run-tests.py --only "$check_tests" -- \
			"${test_args[@]}"
	fi
	;;
*)
	echo "usage: scripts/suite.sh demo|check|test" >&2
	exit 2
	;;
esac
