#!/usr/bin/env bash
# Sharded controllers: time to converge and CPU with 1, 2 and 3 `capw controller` replicas
# over the same clusters. Each run has a fresh kube-apiserver and etcd (tests/kube-env), a
# fresh simcloud (simulated boot, 20 ms delays) and the quickstart's class; the replicas run
# as separate processes, and once they split the shards, CLUSTERS Clusters of one control-
# plane machine and one worker are applied. The run ends when every Cluster is Ready.
#
#   scripts/bench-shards.sh [CLUSTERS] [SHARDS] [RUN...]
#
# RUN: a replica count (default: 1 2 3), each with --shards SHARDS; `1x1` is one replica
# without shards (today's single controller). With KILL=1 the last replica of a run of 2 or
# more is killed (SIGKILL) once a third of the Machines exist, and the time until its shards
# are held by the others is printed.
#
# Prints one Markdown table row per run: replicas, seconds to converge, Machines, CPU seconds
# (user + system) of each replica, of kube-apiserver and of etcd over the run.
#
# Needs `make plugins`, `make kube-env`, and release builds of capw and simcloud:
#   cargo build --release -p capw -p capw-simcloud
set -euo pipefail

clusters=${1:-100}
shards=${2:-6}
shift 2 || shift $#
runs=("$@")
((${#runs[@]})) || runs=(1 2 3)

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
target=${CARGO_TARGET_DIR:-$root/target}
capw=$target/release/capw
simcloud=$target/release/simcloud
plugins=${CAPW_PLUGIN_DIR:-$target/wasm32-wasip2/plugin}
kube_env=$root/tests/kube-env/kube-env.sh
kubectl="$($kube_env bin-dir)/kubectl"
ticks=$(getconf CLK_TCK)
lease=${LEASE_SECONDS:-15}
token=bench-token
work=$(mktemp -d)
export CAPW_CACHE_DIR=$work/compiled
pids=()

stop_all() {
	for pid in "${pids[@]}"; do
		kill -TERM "$pid" 2>/dev/null || true
	done
	for pid in "${pids[@]}"; do
		for _ in $(seq 50); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL "$pid" 2>/dev/null || true
	done
	pids=()
	"$kube_env" stop "$work/env" >/dev/null 2>&1 || true
}
trap 'stop_all; rm -rf "$work"' EXIT

# CPU seconds (user + system) a process has used so far.
cpu() {
	awk -v t="$ticks" '{ printf "%.2f", ($14 + $15) / t }' "/proc/$1/stat" 2>/dev/null || echo 0
}

# Shard Leases held (the group's label is also on the membership Leases, which are not counted).
held_shards() {
	"$kubectl" get leases -n default -l capw.dev/shard-group=capw-controller -o json |
		jq '[.items[] | select((.metadata.name | test("-shard-[0-9]+$")) and .spec.holderIdentity != null and .spec.holderIdentity != "")] | length'
}

holders_of() {
	"$kubectl" get leases -n default -l capw.dev/shard-group=capw-controller -o json |
		jq -r --arg who "$1" '[.items[] | select((.metadata.name | test("-shard-[0-9]+$")) and .spec.holderIdentity == $who)] | length'
}

ready_clusters() {
	"$kubectl" get clusters.capw.dev -n default -o json |
		jq '[.items[] | select(any(.status.conditions[]?; .type == "Ready" and .status == "True"))] | length'
}

machines() {
	"$kubectl" get machines.capw.dev -n default -o json | jq '.items | length'
}

cluster_manifests() {
	for ((i = 0; i < clusters; i++)); do
		cat <<EOF
apiVersion: capw.dev/v1alpha1
kind: Cluster
metadata: {name: c-$i, namespace: default}
spec:
  topology:
    classRef: {name: sim-kubeadm}
    version: v1.34.4
    controlPlane: {replicas: 1}
    workers:
      machineDeployments:
        - {class: default-worker, name: md-0, replicas: 1}
---
EOF
	done
}

run() {
	local spec=$1 replicas shard_flag=(--shards "$shards")
	replicas=${spec%x*}
	if [[ $spec == *x1 ]]; then
		shard_flag=()
	fi
	"$kube_env" start "$work/env" >/dev/null
	export KUBECONFIG=$work/env/kubeconfig
	local apiserver etcd
	apiserver=$(cat "$work/env/kube-apiserver.pid")
	etcd=$(cat "$work/env/etcd.pid")
	"$capw" crds | "$kubectl" apply -f - >/dev/null
	"$kubectl" wait --for condition=established --all crd >/dev/null
	"$kubectl" create secret generic simcloud -n default --from-literal=token=$token >/dev/null

	SIMCLOUD_TOKEN=$token "$simcloud" --listen 127.0.0.1:0 --provision-delay-ms 20 \
		--boot-delay-ms 20 --lb-delay-ms 20 >"$work/simcloud.log" 2>&1 &
	pids+=($!)
	local url=""
	for _ in $(seq 100); do
		url=$(grep -o 'http://[0-9.:]*' "$work/simcloud.log" | head -1) && [[ -n $url ]] && break
		sleep 0.1
	done
	# One document a file: the files need not end with a newline.
	{ cat "$root/examples/quickstart/00-providers.yaml"; printf '\n---\n'; cat "$root/examples/quickstart/10-class.yaml"; } |
		sed "s#http://127.0.0.1:7480#$url#" | "$kubectl" apply -f - >/dev/null

	local controllers=()
	for ((r = 0; r < replicas; r++)); do
		"$capw" --plugin-dir "$plugins" controller --identity "replica-$r" \
			--lease-namespace default --lease-duration-seconds "$lease" \
			--metrics-bind-address 0 --health-probe-bind-address 0 \
			--max-requeue-seconds 1 "${shard_flag[@]}" >"$work/replica-$r.log" 2>&1 &
		pids+=($!)
		controllers+=($!)
	done
	if ((${#shard_flag[@]})); then
		until [[ $(held_shards) == "$shards" ]]; do sleep 0.5; done
		# Let the replicas settle on their shares.
		sleep $((lease / 3 * 2 + 1))
	else
		sleep 2
	fi

	local before_api before_etcd before=() started
	before_api=$(cpu "$apiserver")
	before_etcd=$(cpu "$etcd")
	for pid in "${controllers[@]}"; do before+=("$(cpu "$pid")"); done
	started=$(date +%s.%N)
	cluster_manifests | "$kubectl" apply -f - >/dev/null

	local killed="" victim=$((replicas - 1)) failover=""
	while true; do
		if [[ ${KILL:-0} == 1 && -z $killed && $replicas -ge 2 && $(machines) -ge $((clusters * 2 / 3)) ]]; then
			kill -KILL "${controllers[$victim]}"
			killed=$(date +%s.%N)
		fi
		if [[ -n $killed && -z $failover && $(holders_of "replica-$victim") == 0 && $(held_shards) == "$shards" ]]; then
			failover=$(echo "$(date +%s.%N) - $killed" | bc)
		fi
		[[ $(ready_clusters) == "$clusters" && (-z $killed || -n $failover) ]] && break
		sleep 2
	done
	local took
	took=$(echo "$(date +%s.%N) - $started" | bc)

	local per_replica=()
	for r in "${!controllers[@]}"; do
		if [[ -n $killed && $r == "$victim" ]]; then
			per_replica+=("killed")
		else
			per_replica+=("$(echo "$(cpu "${controllers[$r]}") - ${before[$r]}" | bc)")
		fi
	done
	local api etcd_cpu
	api=$(echo "$(cpu "$apiserver") - $before_api" | bc)
	etcd_cpu=$(echo "$(cpu "$etcd") - $before_etcd" | bc)
	printf '| %s | %s | %.1f | %s | %s | %s | %s |%s\n' "$replicas" \
		"${shard_flag[1]:-1}" "$took" "$(machines)" "$(
			IFS=/
			echo "${per_replica[*]}"
		)" "$api" "$etcd_cpu" "${failover:+ failover ${failover} s}"
	stop_all
}

echo "| replicas | shards | converge (s) | Machines | CPU per replica (s) | kube-apiserver CPU (s) | etcd CPU (s) |"
echo "|---|---|---|---|---|---|---|"
for spec in "${runs[@]}"; do
	run "$spec"
done
