#!/usr/bin/env bash
# capw's Kubernetes binaries and test environment. `build` builds, from source, for each
# Kubernetes version below (each its own Go module beside this script): kube-apiserver,
# kube-controller-manager, kube-scheduler, kubeadm, kubectl, etcd and etcdctl (etcd's own
# commands, of the etcd release that Kubernetes version builds against), and capw-node (the
# machine agent of ./node, version-independent, copied into every version's directory).
# `start` runs a real kube-apiserver and etcd of the main (first) version on loopback, with
# generated serving certificates, a service-account key pair and a static admin token.
#
#   kube-env.sh build [VER]      build what changed into the cache (nothing when up to date);
#                                with VER, that version only (`make demo` builds the quickstart's)
#   kube-env.sh start [DIR]      start etcd and kube-apiserver; state, logs, kubeconfig in DIR
#   kube-env.sh stop  [DIR]      stop both and remove DIR
#   kube-env.sh env   [DIR]      print `export KUBECONFIG=... PATH=...` for a started DIR
#   kube-env.sh bin-root         print the cache root (one <version>/bin directory per version)
#   kube-env.sh bin-dir [VER]    print the binaries' directory of VER (default: the main version)
#   kube-env.sh versions         print the built versions, one a line, the main version first
#
# DIR defaults to $CAPW_KUBE_ENV_DIR, else .kube-env in the current directory.
# $CAPW_KUBE_ENV_OWNER_PID: when set, `start` also leaves a watcher that stops the
# environment once that process is gone (a test binary killed before it could clean up).
# $CAPW_KUBE_ENV_CACHE: the cache root (default $HOME/.cache/capw-kube-env).
# $CAPW_KUBE_ENV_START_TIMEOUT: seconds `start` waits for /readyz (default 180).
# $CAPW_KUBE_ENV_WORKLOADS: `run` makes the management cluster's workloads run: `start` also
# starts kube-controller-manager (with every default controller, the garbage collector among
# them: a Deployment's ReplicaSets and Pods go with it, as in any cluster; an environment
# without workloads runs none, so there what capw deletes, capw must delete),
# kube-scheduler, capw-node's kubelet stand-in (one Node, its Pods run as local
# processes from an image table) and its Service routing stand-in (ClusterIPs, load balancers),
# and a default StorageClass `capw-local`; `simulated` does the same with Pods reported
# Running and Ready without running (for benchmarks at scale). Pods, Services and load
# balancers get addresses of 100.64.0.0/10 made local to this machine (root is needed), a
# range per environment (docs/kubernetes-mode.md).
# $CAPW_KUBE_ENV_IMAGES: a JSON file of more entries for the kubelet stand-in's image table
# (tests/kube-env/node/images.go says their form), such as an image unpacked by a test.
# $CAPW_KUBE_ENV_NODE_CPUS: the CPUs that Node advertises (default this machine's), so that a
# benchmark can place more control planes than their CPU requests fit on the real cores.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# One Go module per Kubernetes version; the first is the main version: the test
# environment's, and the module that holds capw-node.
modules=("$here" "$here/v1.34")
cache_root=${CAPW_KUBE_ENV_CACHE:-$HOME/.cache/capw-kube-env}
start_timeout=${CAPW_KUBE_ENV_START_TIMEOUT:-180}

die() {
	echo "kube-env: $*" >&2
	exit 1
}

module_version() {
	awk '$1 == "k8s.io/kubernetes" { print $2; exit }' "$1/go.mod"
}

k8s_version=$(module_version "${modules[0]}")
bin_dir=$cache_root/$k8s_version/bin

# The Kubernetes commands of a module and how they are built; part of the fingerprint, so a
# change here rebuilds. kubeadm, kubectl and the API server's /version read the version
# from these variables (kubeadm refuses configurations for versions it does not support).
kube_packages=(
	k8s.io/kubernetes/cmd/kube-apiserver
	k8s.io/kubernetes/cmd/kube-controller-manager
	k8s.io/kubernetes/cmd/kube-scheduler
	k8s.io/kubernetes/cmd/kubeadm
	k8s.io/kubernetes/cmd/kubectl
	go.etcd.io/etcd/etcdctl/v3
	./etcd
)
kube_binaries=(kube-apiserver kube-controller-manager kube-scheduler kubeadm kubectl etcd etcdctl)

kube_ldflags() {
	local version=$1 major minor pkg flags="-s -w"
	major=${version#v}
	major=${major%%.*}
	minor=${version#v*.}
	minor=${minor%%.*}
	for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
		flags+=" -X $pkg.gitVersion=$version -X $pkg.gitMajor=$major -X $pkg.gitMinor=$minor"
		flags+=" -X $pkg.gitTreeState=clean"
	done
	echo "$flags"
}

# A module's fingerprint: its go.mod, go.sum, its etcd program and the build recipe.
kube_digest() {
	local module=$1
	{
		cat "$module/go.mod" "$module/go.sum" "$module"/etcd/*.go
		echo "${kube_packages[*]}" "$(kube_ldflags "$(module_version "$module")")"
	} | sha256sum | cut -d' ' -f1
}

# capw-node's fingerprint: the main module's go.mod and go.sum and every file of ./node, by
# name and content (names relative to the module, so every checkout agrees).
node_digest() {
	(
		cd "${modules[0]}"
		cat go.mod go.sum
		find node -type f -print0 | sort -z | xargs -0 sha256sum
	) | sha256sum | cut -d' ' -f1
}

has_node() {
	[[ -d ${modules[0]}/node ]]
}

kube_built() {
	local module=$1 dir name
	dir=$cache_root/$(module_version "$module")/bin
	for name in "${kube_binaries[@]}"; do
		[[ -x $dir/$name ]] || return 1
	done
	[[ -f $dir/inputs.sha256 && $(cat "$dir/inputs.sha256") == "$(kube_digest "$module")" ]]
}

node_built() {
	local dir=$1
	[[ -x $dir/capw-node && -f $dir/capw-node.sha256 && $(cat "$dir/capw-node.sha256") == "$(node_digest)" ]]
}

require_go() {
	command -v go >/dev/null || die "go is not installed (needed to build the Kubernetes binaries)"
}

build_kube() {
	local module=$1 version dir staging
	version=$(module_version "$module")
	dir=$cache_root/$version/bin
	kube_built "$module" && return 0
	require_go
	echo "kube-env: building ${kube_binaries[*]} $version into $dir (first time: many minutes)" >&2
	staging=$dir.tmp.$$
	rm -rf "$staging"
	mkdir -p "$staging"
	(
		cd "$module"
		CGO_ENABLED=0 go build -trimpath -buildvcs=false -ldflags "$(kube_ldflags "$version")" \
			-o "$staging/" "${kube_packages[@]}"
	) || {
		rm -rf "$staging"
		die "building the binaries of $version failed"
	}
	kube_digest "$module" >"$staging/inputs.sha256"
	rm -rf "$dir"
	mv "$staging" "$dir"
}

# capw-node is built once, from the main module, and copied into the directory of every
# version given (the modules' paths).
build_node() {
	has_node || return 0
	local module dir built_once=""
	for module in "$@"; do
		dir=$cache_root/$(module_version "$module")/bin
		node_built "$dir" && continue
		if [[ -z $built_once ]]; then
			require_go
			echo "kube-env: building capw-node" >&2
			built_once=$cache_root/capw-node.tmp.$$
			(cd "${modules[0]}" && CGO_ENABLED=0 go build -trimpath -buildvcs=false -ldflags "-s -w" \
				-o "$built_once" ./node) || {
				rm -f "$built_once"
				die "building capw-node failed"
			}
		fi
		cp "$built_once" "$dir/capw-node.tmp.$$"
		mv "$dir/capw-node.tmp.$$" "$dir/capw-node"
		node_digest >"$dir/capw-node.sha256"
	done
	[[ -z $built_once ]] || rm -f "$built_once"
}

cmd_build() {
	local only=${1:-} module selected=()
	for module in "${modules[@]}"; do
		if [[ -z $only || $(module_version "$module") == "$only" ]]; then
			selected+=("$module")
		fi
	done
	((${#selected[@]})) || die "no Kubernetes version $only here (known: $(known_versions | paste -sd' '))"
	mkdir -p "$cache_root"
	# One build at a time (several worktrees or test runs may share the cache).
	exec 9>"$cache_root/build.lock"
	flock 9
	for module in "${selected[@]}"; do
		build_kube "$module"
	done
	build_node "${selected[@]}"
	exec 9>&-
}

cmd_bin_dir() {
	local version=${1:-$k8s_version} module
	for module in "${modules[@]}"; do
		if [[ $(module_version "$module") == "$version" ]]; then
			echo "$cache_root/$version/bin"
			return 0
		fi
	done
	die "no Kubernetes version $version here (known: $(known_versions | paste -sd' '))"
}

known_versions() {
	local module
	for module in "${modules[@]}"; do
		module_version "$module"
	done
}

cmd_versions() {
	local module
	for module in "${modules[@]}"; do
		kube_built "$module" && module_version "$module"
	done
	return 0
}

free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

state_dir() {
	local dir=${1:-${CAPW_KUBE_ENV_DIR:-.kube-env}}
	mkdir -p "$dir"
	(cd "$dir" && pwd)
}

make_certs() {
	local dir=$1
	(
		cd "$dir/pki"
		openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
			-subj /CN=capw-test-ca -keyout ca.key -out ca.crt 2>/dev/null
		openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
			-subj /CN=kube-apiserver -keyout apiserver.key -out apiserver.csr 2>/dev/null
		printf 'subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:kubernetes.default.svc\nextendedKeyUsage=serverAuth\n' >apiserver.ext
		openssl x509 -req -in apiserver.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 \
			-extfile apiserver.ext -out apiserver.crt 2>/dev/null
		openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out sa.key 2>/dev/null
		openssl pkey -in sa.key -pubout -out sa.pub 2>/dev/null
		echo "$(openssl rand -hex 32),capw-admin,capw-admin,system:masters" >tokens.csv
		chmod 600 ./*.key tokens.csv
	)
}

write_kubeconfig() {
	local dir=$1 port=$2 token
	token=$(cut -d, -f1 "$dir/pki/tokens.csv")
	cat >"$dir/kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: capw-test
  cluster:
    server: https://127.0.0.1:$port
    certificate-authority-data: $(base64 -w0 "$dir/pki/ca.crt")
users:
- name: capw-admin
  user:
    token: $token
contexts:
- name: capw-test
  context:
    cluster: capw-test
    user: capw-admin
    namespace: default
current-context: capw-test
EOF
	chmod 600 "$dir/kubeconfig"
}

running() {
	local pid_file=$1
	[[ -f $pid_file ]] && kill -0 "$(cat "$pid_file")" 2>/dev/null
}

# The address ranges of an environment whose workloads run: one of 256 slots, claimed by a
# directory under $ranges_root so that environments started at once never share one. Sets
# pod_cidr (a /20), service_cidr and lb_cidr (a /24 each).
ranges_root=${TMPDIR:-/tmp}/capw-kube-ranges
claim_ranges() {
	local dir=$1 k owner
	mkdir -p "$ranges_root"
	for _ in $(seq 512); do
		k=$((RANDOM % 256))
		if mkdir "$ranges_root/$k" 2>/dev/null; then
			echo "$dir" >"$ranges_root/$k/owner"
			pod_cidr=100.$((64 + k / 16)).$(((k % 16) * 16)).0/20
			service_cidr=100.80.$k.0/24
			lb_cidr=100.81.$k.0/24
			echo "$k" >"$dir/range-slot"
			return 0
		fi
		# A claim whose environment is gone is free again.
		owner=$(cat "$ranges_root/$k/owner" 2>/dev/null || true)
		if [[ -n $owner && ! -d $owner ]]; then
			rm -rf "${ranges_root:?}/$k"
		fi
	done
	die "no free address range under $ranges_root (256 environments running?)"
}

# The image table of the kubelet stand-in: which program a Pod's image runs. The Kubernetes
# components run the binaries of their tag's version, etcd the main version's; pause runs
# nothing.
write_images() {
	local file=$1 extra=${CAPW_KUBE_ENV_IMAGES:-}
	cat >"$file" <<EOF
[
  {"image": "registry.k8s.io/pause", "pause": true},
  {"image": "registry.k8s.io/kube-apiserver", "binary": "$cache_root/{tag}/bin/kube-apiserver"},
  {"image": "registry.k8s.io/kube-controller-manager", "binary": "$cache_root/{tag}/bin/kube-controller-manager"},
  {"image": "registry.k8s.io/kube-scheduler", "binary": "$cache_root/{tag}/bin/kube-scheduler"},
	{"image": "registry.k8s.io/etcd", "binary": "$bin_dir/etcd"}
]
EOF
	if [[ -n $extra ]]; then
		python3 - "$file" "$extra" <<'PY' || die "the image table entries of \$CAPW_KUBE_ENV_IMAGES ($extra) are not a JSON list"
import json, sys
table, extra = sys.argv[1], sys.argv[2]
with open(extra) as f:
    more = json.load(f)
if not isinstance(more, list):
    sys.exit(1)
with open(table) as f:
    entries = json.load(f)
with open(table, "w") as f:
    json.dump(entries + more, f, indent=2)
PY
	fi
}

# Starts what makes the workloads of the environment in $1 run (see $CAPW_KUBE_ENV_WORKLOADS
# above); $2 is `run` or `simulated`.
start_workloads() {
	local dir=$1 mode=$2 simulated=()
	[[ $mode == simulated ]] && simulated=(--simulated)
	local kubeconfig=$dir/kubeconfig
	setsid "$bin_dir/kube-controller-manager" \
		--kubeconfig "$kubeconfig" --authentication-kubeconfig "$kubeconfig" \
		--authorization-kubeconfig "$kubeconfig" \
		--leader-elect=false \
		--bind-address 127.0.0.1 --secure-port "$(free_port)" \
		--service-account-private-key-file "$dir/pki/sa.key" --root-ca-file "$dir/pki/ca.crt" \
		--cluster-signing-cert-file "$dir/pki/ca.crt" --cluster-signing-key-file "$dir/pki/ca.key" \
		--service-cluster-ip-range "$service_cidr" --allocate-node-cidrs=false \
		</dev/null >"$dir/logs/kube-controller-manager.log" 2>&1 &
	echo $! >"$dir/kube-controller-manager.pid"
	setsid "$bin_dir/kube-scheduler" \
		--kubeconfig "$kubeconfig" --authentication-kubeconfig "$kubeconfig" \
		--authorization-kubeconfig "$kubeconfig" --leader-elect=false \
		--bind-address 127.0.0.1 --secure-port "$(free_port)" \
		</dev/null >"$dir/logs/kube-scheduler.log" 2>&1 &
	echo $! >"$dir/kube-scheduler.pid"
	write_images "$dir/images.json"
	mkdir -p "$dir/node"
	setsid "$bin_dir/capw-node" kubelet --kubeconfig "$kubeconfig" --name capw-management \
		--root "$dir/node" --images "$dir/images.json" --pod-cidr "$pod_cidr" "${simulated[@]}" \
		--cpus "${CAPW_KUBE_ENV_NODE_CPUS:-0}" \
		</dev/null >"$dir/logs/kubelet.log" 2>&1 &
	echo $! >"$dir/kubelet.pid"
	setsid "$bin_dir/capw-node" proxy --kubeconfig "$kubeconfig" \
		--service-cidr "$service_cidr" --load-balancer-cidr "$lb_cidr" \
		</dev/null >"$dir/logs/proxy.log" 2>&1 &
	echo $! >"$dir/proxy.pid"
	"$bin_dir/kubectl" --kubeconfig "$kubeconfig" apply -f - >/dev/null <<EOF
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: capw-local
  annotations:
    storageclass.kubernetes.io/is-default-class: "true"
provisioner: capw.dev/local
reclaimPolicy: Delete
volumeBindingMode: WaitForFirstConsumer
EOF
	local deadline=$((SECONDS + start_timeout))
	until "$bin_dir/kubectl" --kubeconfig "$kubeconfig" get node capw-management \
		-o 'jsonpath={.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null | grep -qx True; do
		if ! running "$dir/kubelet.pid" || ! running "$dir/proxy.pid" ||
			! running "$dir/kube-controller-manager.pid" || ! running "$dir/kube-scheduler.pid" ||
			((SECONDS > deadline)); then
			echo "kube-env: the management cluster's Node did not become Ready; last lines of its logs:" >&2
			tail -n 20 "$dir"/logs/{kubelet,proxy,kube-controller-manager,kube-scheduler}.log >&2 || true
			cmd_stop "$dir" >/dev/null 2>&1 || true
			exit 1
		fi
		sleep 0.2
	done
}

cmd_start() {
	kube_built "${modules[0]}" ||
		die "the binaries for $k8s_version are not built: run \`make kube-env\` (or \`$0 build\`)"
	local dir
	dir=$(state_dir "${1:-}")
	if running "$dir/kube-apiserver.pid" || running "$dir/etcd.pid"; then
		die "an environment is already running in $dir (stop it first)"
	fi
	rm -rf "${dir:?}"/{etcd-data,pki,logs,bin}
	mkdir -p "$dir/pki" "$dir/logs"
	ln -s "$bin_dir" "$dir/bin"
	make_certs "$dir"

	local workloads=${CAPW_KUBE_ENV_WORKLOADS:-} service_range=10.96.0.0/16
	case $workloads in
	'' | run | simulated) ;;
	*) die "CAPW_KUBE_ENV_WORKLOADS is $workloads; run or simulated (or unset)" ;;
	esac
	if [[ -n $workloads ]]; then
		claim_ranges "$dir"
		service_range=$service_cidr
	fi

	local etcd_port peer_port api_port
	etcd_port=$(free_port)
	peer_port=$(free_port)
	api_port=$(free_port)

	# Test data is thrown away with the environment: skipping fsync keeps writes fast.
	setsid "$bin_dir/etcd" --name capw-test --data-dir "$dir/etcd-data" \
		--listen-client-urls "http://127.0.0.1:$etcd_port" \
		--advertise-client-urls "http://127.0.0.1:$etcd_port" \
		--listen-peer-urls "http://127.0.0.1:$peer_port" \
		--initial-advertise-peer-urls "http://127.0.0.1:$peer_port" \
		--initial-cluster "capw-test=http://127.0.0.1:$peer_port" \
		--unsafe-no-fsync --log-level warn \
		</dev/null >"$dir/logs/etcd.log" 2>&1 &
	echo $! >"$dir/etcd.pid"

	setsid "$bin_dir/kube-apiserver" \
		--etcd-servers "http://127.0.0.1:$etcd_port" \
		--bind-address 127.0.0.1 --advertise-address 127.0.0.1 --secure-port "$api_port" \
		--tls-cert-file "$dir/pki/apiserver.crt" --tls-private-key-file "$dir/pki/apiserver.key" \
		--token-auth-file "$dir/pki/tokens.csv" \
		--authorization-mode RBAC \
		--service-account-issuer https://kubernetes.default.svc \
		--service-account-key-file "$dir/pki/sa.pub" \
		--service-account-signing-key-file "$dir/pki/sa.key" \
		--service-cluster-ip-range "$service_range" \
		--cert-dir "$dir/pki" \
		--profiling=false \
		</dev/null >"$dir/logs/kube-apiserver.log" 2>&1 &
	echo $! >"$dir/kube-apiserver.pid"

	write_kubeconfig "$dir" "$api_port"
	echo "$api_port" >"$dir/port"

	if [[ -n ${CAPW_KUBE_ENV_OWNER_PID:-} ]]; then
		local owner=$CAPW_KUBE_ENV_OWNER_PID
		setsid bash -c 'while kill -0 "$1" 2>/dev/null && [[ -d $2 ]]; do sleep 1; done; [[ -d $2 ]] && exec "$3" stop "$2"' \
			kube-env-watch "$owner" "$dir" "$here/kube-env.sh" </dev/null >/dev/null 2>&1 &
		echo $! >"$dir/watcher.pid"
	fi

	local deadline=$((SECONDS + start_timeout))
	until "$bin_dir/kubectl" --kubeconfig "$dir/kubeconfig" --request-timeout=5s get --raw /readyz >/dev/null 2>&1; do
		if ! running "$dir/etcd.pid" || ! running "$dir/kube-apiserver.pid" || ((SECONDS > deadline)); then
			echo "kube-env: the API server did not become ready; last lines of its logs:" >&2
			tail -n 20 "$dir/logs/etcd.log" "$dir/logs/kube-apiserver.log" >&2 || true
			cmd_stop "$dir" >/dev/null 2>&1 || true
			exit 1
		fi
		sleep 0.2
	done
	[[ -z $workloads ]] || start_workloads "$dir" "$workloads"
	echo "kube-env: ready at https://127.0.0.1:$api_port; KUBECONFIG=$dir/kubeconfig" >&2
}

# Stops the process of $1 (a pid file): SIGTERM, then SIGKILL after $2 seconds (default 10).
stop_process() {
	local pid_file=$1 wait=${2:-10} pid
	[[ -f $pid_file ]] || return 0
	pid=$(cat "$pid_file")
	if kill -TERM "$pid" 2>/dev/null; then
		for _ in $(seq $((wait * 10))); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL "$pid" 2>/dev/null || true
	fi
	rm -f "$pid_file"
}

cmd_stop() {
	local dir=${1:-${CAPW_KUBE_ENV_DIR:-.kube-env}}
	[[ -d $dir ]] || return 0
	# The watcher itself ends up here (same pid) once its owner is gone.
	if [[ -f $dir/watcher.pid && $(cat "$dir/watcher.pid") != "$$" ]]; then
		stop_process "$dir/watcher.pid"
	fi
	# The kubelet stand-in first: it stops its Pods' processes, each within its grace period
	# (30 s unless the Pod says otherwise).
	stop_process "$dir/kubelet.pid" 40
	local component
	for component in proxy kube-scheduler kube-controller-manager kube-apiserver etcd; do
		stop_process "$dir/$component.pid"
	done
	if [[ -f $dir/range-slot ]]; then
		rm -rf "${ranges_root:?}/$(cat "$dir/range-slot")"
	fi
	rm -rf "$dir"
}

cmd_env() {
	local dir=${1:-${CAPW_KUBE_ENV_DIR:-.kube-env}}
	[[ -f $dir/kubeconfig ]] || die "no environment started in $dir"
	dir=$(cd "$dir" && pwd)
	echo "export KUBECONFIG=$dir/kubeconfig PATH=$bin_dir:\$PATH"
}

# Bash reads a script while it runs it: with the dispatch in a function and the call and
# `exit` on one last line, a build that outlives a checkout of this file ends as it began.
main() {
	case ${1:-} in
	build) cmd_build "${@:2}" ;;
	start) cmd_start "${2:-}" ;;
	stop) cmd_stop "${2:-}" ;;
	env) cmd_env "${2:-}" ;;
	bin-root) echo "$cache_root" ;;
	bin-dir) cmd_bin_dir "${2:-}" ;;
	versions) cmd_versions ;;
	*)
		sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//' >&2
		exit 2
		;;
	esac
}

main "$@"; exit
