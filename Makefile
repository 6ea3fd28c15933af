# capw's build entry points. `make demo` is the main job, `make test` runs every test.
# Both install what they need (the wasm32-wasip2 target) and build the provider components.

CARGO ?= cargo
PLUGIN_TARGET := wasm32-wasip2
# CI keeps its build outside the clone by setting CARGO_TARGET_DIR.
TARGET_DIR := $(or $(CARGO_TARGET_DIR),$(CURDIR)/target)
PLUGIN_DIR := $(TARGET_DIR)/$(PLUGIN_TARGET)/plugin
PLUGINS := capw-example-provider capw-hostile-provider capw-kubeadm-control-plane \
	capw-sim-infra capw-sim-managed-control-plane capw-hosted-control-plane capw-kubeadm-bootstrap \
	capw-broken-provider capw-broken-metadata-provider \
	capw-hooks-v0-1-provider capw-hooks-v0-2-provider capw-fixed-control-plane-provider capw-scripted-hosted-provider
export CAPW_PLUGIN_DIR := $(PLUGIN_DIR)

.PHONY: setup plugins build image test-deps-image demo check test lint fmt-check clippy bench bench-runs bench-scale bench-kube bench-hosted bench-shards bench-languages kube-env crds test-deps-oci toolchains examples go-sim-infra py-control-plane js-hooks fuzz fuzz-check fuzz-tool

# The example providers in other languages (plugins/other-languages/) and their toolchains.
EXAMPLES := c python js go
TOOLCHAINS_ENV := $(TARGET_DIR)/toolchains.env

## setup: the toolchain pieces a fresh machine lacks.
setup:
	@rustup target list --installed | grep -qx $(PLUGIN_TARGET) || rustup target add $(PLUGIN_TARGET)

## test-deps-oci: the real OCI registry the tests start on loopback (Debian's docker-registry),
## htpasswd (apache2-utils) for its credentials and curl, a client we did not write, to read
## what the registry holds; installed only when missing.
test-deps-oci:
	@scripts/suite.sh _run debian docker-registry apache2-utils curl

## plugins: every provider component, from source.
plugins: setup
	$(CARGO) build --profile plugin --target $(PLUGIN_TARGET) $(addprefix -p ,$(PLUGINS))

## toolchains: what builds the examples in other languages, pinned and cached in
## ~/.cache/capw-toolchains: clang, lld and wasi-libc (apt), componentize-py and wasm-tools
## (pip), componentize-js (npm), wit-bindgen (cargo), the WASI preview1 reactor adapter.
toolchains:
	@mkdir -p $(TARGET_DIR)
	@scripts/toolchains.sh > $(TOOLCHAINS_ENV).new && mv $(TOOLCHAINS_ENV).new $(TOOLCHAINS_ENV)

## examples: the example providers in C, Python, JavaScript and Go, from source, into the
## plugin directory beside the Rust ones, and go-sim-infra. Each is rebuilt only when its
## sources change.
examples: toolchains go-sim-infra py-control-plane js-hooks
	@for lang in $(EXAMPLES); do \
		env $$(cat $(TOOLCHAINS_ENV)) $(MAKE) --no-print-directory -C plugins/other-languages/$$lang \
			WIT=$(CURDIR)/wit/0.1 BUILD=$(TARGET_DIR)/examples/$$lang \
			OUT=$(PLUGIN_DIR)/capw_example_$$lang.wasm || exit 1; \
	done

## py-control-plane: a control-plane provider in Python (plugins/other-languages/py-control-plane)
## following kubeadm-control-plane's rules, written with capw's Python SDK (sdk/python), into the
## plugin directory as capw_py_control_plane.wasm; rebuilt only when its sources or the SDK's change.
py-control-plane: toolchains
	@env $$(cat $(TOOLCHAINS_ENV)) $(MAKE) --no-print-directory -C plugins/other-languages/py-control-plane \
		OUT=$(PLUGIN_DIR)/capw_py_control_plane.wasm

## js-hooks: a lifecycle-hooks provider in JavaScript (plugins/other-languages/js-hooks), written
## with capw's JavaScript SDK (sdk/js), into the plugin directory as capw_js_hooks.wasm; rebuilt
## only when its sources or the SDK's change.
js-hooks: toolchains
	@env $$(cat $(TOOLCHAINS_ENV)) $(MAKE) --no-print-directory -C plugins/other-languages/js-hooks \
		OUT=$(PLUGIN_DIR)/capw_js_hooks.wasm

## go-sim-infra: the Go twin of sim-infra (plugins/other-languages/go-sim-infra), written with
## capw's Go SDK (sdk/go), into the plugin directory as capw_go_sim_infra.wasm; rebuilt only
## when its sources or the SDK's change.
go-sim-infra: toolchains
	@env $$(cat $(TOOLCHAINS_ENV)) $(MAKE) --no-print-directory -C plugins/other-languages/go-sim-infra \
		BUILD=$(TARGET_DIR)/examples/go-sim-infra OUT=$(PLUGIN_DIR)/capw_go_sim_infra.wasm

## build: the capw binary.
build:
	$(CARGO) build --release -p capw --features simcloud

## test-deps-image: what `make image` needs beside Rust: umoci (assembles the image without a
## container daemon), skopeo (pushes it), binutils (strips its debug info) and ca-certificates
## (the image's trust roots); installed only when missing.
test-deps-image:
	@scripts/suite.sh _run debian umoci skopeo binutils ca-certificates

## image: the controller's container image, built without a container daemon: capw's release
## build without the simulated cloud (every dependency shared with `make build`), with the
## libraries it loads, in an OCI image layout in $(TARGET_DIR)/image/oci, and beside it
## a kustomization installing deploy/ with that image by digest. With PUSH=registry/repo[:tag]
## the image is pushed there too and the kustomization names the pushed image
## (scripts/image.sh, docs/kubernetes-mode.md).
PUSH ?=
image: test-deps-image
	TARGET_DIR=$(TARGET_DIR) CARGO=$(CARGO) scripts/image.sh build
	$(if $(PUSH),TARGET_DIR=$(TARGET_DIR) scripts/image.sh push $(PUSH))

## demo: the main job: build the providers, capw and the Kubernetes binaries of the quickstart's
## version from source (the Kubernetes build in the background while Rust compiles), then bring
## up the quickstart's two clusters in the embedded local mode (state in .capw/, simcloud
## in-process) with real control planes (docs/workload-clusters.md). Running it again changes
## nothing; the clusters keep running after it ends. Each stage prints a line when it ends, and
## a table of where the time went closes the run (scripts/suite.sh, scripts/step.py).
demo:
	scripts/suite.sh demo

## kube-env: the Kubernetes binaries, built from source into
## $$HOME/.cache/capw-kube-env/<version>/bin for each version tests/kube-env builds (v1.35.4 and
## v1.34.4): kube-apiserver, kube-controller-manager, kube-scheduler, kubeadm, kubectl, etcd,
## etcdctl and the capw-node machine agent; rebuilt only when their inputs change (openssl and
## Go must be there).
kube-env:
	@scripts/suite.sh _run debian openssl
	tests/kube-env/kube-env.sh build

## crds: regenerate deploy/crds.yaml from the Rust types (a test fails when it drifts).
crds:
	$(CARGO) run -q -p capw -- crds > deploy/crds.yaml.new
	mv deploy/crds.yaml.new deploy/crds.yaml

## check: the fast tier, for the inner loop: fmt, clippy inside the build, the unit tests of
## every crate and the integration tests of the runtime (hostile providers among them), the
## engine, local mode (not its day-two real boots), Kubernetes mode against a real API server,
## admission and the faults.
check:
	scripts/suite.sh check

## test: every test of the project, what CI runs: fmt first, clippy inside the builds the tests
## need, the Kubernetes binaries, Debian packages and other languages' toolchains in the
## background while Rust compiles, the fuzz targets' libFuzzer entries checked (cargo check, no
## libFuzzer), the test binaries three at a time (scripts/run-tests.py), the doc tests and
## capw-node's Go test; a table of where the time went at the end.
test:
	scripts/suite.sh test

## lint: fmt and clippy as passes of their own (`make check` and `make test` lint inside their
## builds).
lint: fmt-check clippy

fmt-check:
	$(CARGO) fmt --all -- --check

clippy: setup
	$(CARGO) clippy --workspace --all-targets -- -D warnings
	$(CARGO) clippy --workspace --all-targets --features capw/simcloud -- -D warnings
	$(CARGO) clippy --profile plugin --target $(PLUGIN_TARGET) $(addprefix -p ,$(PLUGINS)) -- -D warnings

## bench: the criterion benchmarks of provider calls; see docs/performance.md.
bench: plugins
	$(CARGO) bench -p capw-runtime --bench calls
	@python3 scripts/bench-summary.py $(TARGET_DIR)/criterion

## bench-scale: the local mode at scale with the release build: `capw bench converge` and
## `capw bench resync` at each size of SIZES (clusters; default 100 1000 10000), MACHINES
## control-plane + workers each (default 3 3); see docs/performance.md.
SIZES ?= 100 1000 10000
MACHINES ?= 3 3
bench-scale: plugins build
	@set -e; cp=$(word 1,$(MACHINES)); w=$(word 2,$(MACHINES)); for n in $(SIZES); do \
		for what in converge resync; do \
			echo "== capw bench $$what --clusters $$n --control-plane $$cp --workers $$w"; \
			$(TARGET_DIR)/release/capw --plugin-dir $(PLUGIN_DIR) bench $$what \
				--clusters $$n --control-plane $$cp --workers $$w; \
		done; \
	done

## bench-kube: the Kubernetes mode at scale: `capw bench kube` against a fresh kube-apiserver
## and etcd (tests/kube-env) with CLUSTERS clusters (default 1000) of MACHINES each; prints
## capw's and the API server's and etcd's CPU and memory; see docs/performance.md.
CLUSTERS ?= 1000
bench-kube: plugins build kube-env
	@set -e; dir=$$(mktemp -d); trap "tests/kube-env/kube-env.sh stop $$dir/env >/dev/null; rm -rf $$dir" EXIT; \
		tests/kube-env/kube-env.sh start $$dir/env; \
		$(TARGET_DIR)/release/capw --plugin-dir $(PLUGIN_DIR) bench kube \
			--kubeconfig $$dir/env/kubeconfig --clusters $(CLUSTERS) \
			--control-plane $(word 1,$(MACHINES)) --workers $(word 2,$(MACHINES))

## bench-hosted: hosted control planes at scale: `capw bench hosted` against a fresh
## kube-apiserver and etcd (tests/kube-env) with CLUSTERS hosted Clusters (default 1000), their
## Pods simulated; prints capw's CPU and memory per hosted control plane in the steady state,
## and the API server's and etcd's; see docs/performance.md. PODS=real runs them instead, in a
## management cluster whose workloads run (kube-controller-manager, kube-scheduler, the process
## kubelet and Service routing of tests/kube-env): use a handful, `CLUSTERS=10 PODS=real`.
PODS ?= simulated
bench-hosted: plugins build kube-env
	@set -e; dir=$$(mktemp -d); trap "tests/kube-env/kube-env.sh stop $$dir/env >/dev/null; rm -rf $$dir" EXIT; \
		$(if $(filter real,$(PODS)),CAPW_KUBE_ENV_WORKLOADS=run) tests/kube-env/kube-env.sh start $$dir/env; \
		$(TARGET_DIR)/release/capw --plugin-dir $(PLUGIN_DIR) bench hosted \
			--kubeconfig $$dir/env/kubeconfig --clusters $(CLUSTERS) --pods $(PODS)

## bench-shards: `capw controller --shards 6` with 1, 2 and 3 replicas (separate processes)
## over the same CLUSTERS clusters, each run on a fresh API server; see
## docs/kubernetes-controller.md and scripts/bench-shards.sh.
bench-shards: plugins build kube-env
	$(CARGO) build --release -p capw-simcloud
	scripts/bench-shards.sh $(CLUSTERS) 6 1 2 3

## bench-languages: the bootstrap starter of `capw plugin new` built in every language, then
## `capw bench languages` over them in one run: size, cold compile, cached load, call latency
## fresh and reused; see docs/performance.md and scripts/bench-languages.sh.
bench-languages: build toolchains
	scripts/bench-languages.sh $(TARGET_DIR)/release/capw $(TARGET_DIR)

## bench-runs: the same benchmarks RUNS times (default 7), each run a new process pinned to
## one core; prints each benchmark's median over the runs and their range, as
## docs/performance.md reports them.
RUNS ?= 7
bench-runs: plugins
	$(CARGO) bench -p capw-runtime --bench calls --no-run --message-format=json \
		| python3 scripts/bench-runs.py --runs $(RUNS) --criterion $(TARGET_DIR)/criterion

## fuzz: each fuzz target of fuzz/ (fuzz/README.md) for FUZZ_SECONDS (default 900), one after
## the other, growing its corpus in fuzz/corpus/<target>; a crash stops the run and leaves its
## input in fuzz/artifacts/<target>. Built apart from the main build, in $(TARGET_DIR)/fuzz,
## on stable Rust (no sanitizer).
FUZZ_SECONDS ?= 900
FUZZ_TARGETS := manifest topology provider_schema provider_answers answer_checks
CARGO_FUZZ_VERSION := 0.13.1
fuzz: fuzz-tool
	@set -e; for target in $(FUZZ_TARGETS); do \
		echo "== fuzz $$target for $(FUZZ_SECONDS) s"; \
		mkdir -p fuzz/corpus/$$target; \
		CARGO_TARGET_DIR=$(TARGET_DIR)/fuzz $(CARGO) fuzz run --sanitizer none --fuzz-dir fuzz \
			$$target fuzz/corpus/$$target -- -max_total_time=$(FUZZ_SECONDS); \
	done

## fuzz-check: every fuzz target for 20 s: a quick check that they build and hold.
fuzz-check:
	$(MAKE) --no-print-directory fuzz FUZZ_SECONDS=20

## fuzz-tool: cargo-fuzz, pinned, installed when missing.
fuzz-tool:
	@$(CARGO) fuzz --version 2>/dev/null | grep -q " $(CARGO_FUZZ_VERSION)$$" || \
		$(CARGO) install --locked cargo-fuzz --version $(CARGO_FUZZ_VERSION)
