#!/usr/bin/env bash
# capw's Kubernetes test environment: a real kube-apiserver and etcd on loopback, built from
# source (the Go module beside this script), with generated serving certificates, a
# service-account key pair and a static admin token; kubectl of the same version beside them.
#
#   kube-env.sh build          build kube-apiserver, etcd and kubectl once into the cache
#   kube-env.sh start [DIR]    start both; state, logs and kubeconfig in DIR
#   kube-env.sh stop  [DIR]    stop both and remove DIR
#   kube-env.sh env   [DIR]    print `export KUBECONFIG=... PATH=...` for a started DIR
#   kube-env.sh bin-dir        print the directory of the cached binaries
#
# DIR defaults to $CAPW_KUBE_ENV_DIR, else .kube-env in the current directory.
# $CAPW_KUBE_ENV_OWNER_PID: when set, `start` also leaves a watcher that stops the
# environment once that process is gone (a test binary killed before it could clean up).
# $CAPW_KUBE_ENV_CACHE: the cache root (default $HOME/.cache/capw-kube-env).
# $CAPW_KUBE_ENV_START_TIMEOUT: seconds `start` waits for /readyz (default 180).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
k8s_version=$(awk '$1 == "k8s.io/kubernetes" { print $2; exit }' "$here/go.mod")
cache_root=${CAPW_KUBE_ENV_CACHE:-$HOME/.cache/capw-kube-env}
bin_dir=$cache_root/$k8s_version/bin
start_timeout=${CAPW_KUBE_ENV_START_TIMEOUT:-180}

die() {
	echo "kube-env: $*" >&2
	exit 1
}

# The build inputs' fingerprint: a change to the module or the etcd wrapper rebuilds.
inputs_digest() {
	cat "$here/go.mod" "$here/go.sum" "$here"/etcd/*.go | sha256sum | cut -d' ' -f1
}

built() {
	[[ -x $bin_dir/kube-apiserver && -x $bin_dir/etcd && -x $bin_dir/kubectl && -f $bin_dir/inputs.sha256 ]] &&
		[[ $(cat "$bin_dir/inputs.sha256") == "$(inputs_digest)" ]]
}

cmd_build() {
	if built; then
		return 0
	fi
	command -v go >/dev/null || die "go is not installed (needed to build kube-apiserver and etcd)"
	echo "kube-env: building kube-apiserver and kubectl $k8s_version and etcd into $bin_dir (first time: several minutes)" >&2
	local staging=$bin_dir.tmp.$$
	mkdir -p "$staging"
	trap 'rm -rf "$staging"' RETURN
	(
		cd "$here"
		CGO_ENABLED=0 go build -trimpath -buildvcs=false \
			-ldflags "-s -w -X k8s.io/component-base/version.gitVersion=$k8s_version -X k8s.io/client-go/pkg/version.gitVersion=$k8s_version" \
			-o "$staging/" k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kubectl ./etcd
	)
	inputs_digest >"$staging/inputs.sha256"
	mkdir -p "$(dirname "$bin_dir")"
	rm -rf "$bin_dir"
	mv "$staging" "$bin_dir"
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

cmd_start() {
	built || die "the binaries for $k8s_version are not built: run \`make kube-env\` (or \`$0 build\`)"
	local dir
	dir=$(state_dir "${1:-}")
	if running "$dir/kube-apiserver.pid" || running "$dir/etcd.pid"; then
		die "an environment is already running in $dir (stop it first)"
	fi
	rm -rf "${dir:?}"/{etcd-data,pki,logs,bin}
	mkdir -p "$dir/pki" "$dir/logs"
	ln -s "$bin_dir" "$dir/bin"
	make_certs "$dir"

	local etcd_port peer_port api_port
	etcd_port=$(free_port)
	peer_port=$(free_port)
	api_port=$(free_port)

	setsid "$bin_dir/etcd" --data-dir "$dir/etcd-data" \
		--listen-client-url "http://127.0.0.1:$etcd_port" \
		--listen-peer-url "http://127.0.0.1:$peer_port" \
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
		--service-cluster-ip-range 10.96.0.0/24 \
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
	until "$bin_dir/kubectl" --kubeconfig "$dir/kubeconfig" get --raw /readyz >/dev/null 2>&1; do
		if ! running "$dir/etcd.pid" || ! running "$dir/kube-apiserver.pid" || ((SECONDS > deadline)); then
			echo "kube-env: the API server did not become ready; last lines of its logs:" >&2
			tail -n 20 "$dir/logs/etcd.log" "$dir/logs/kube-apiserver.log" >&2 || true
			cmd_stop "$dir" >/dev/null 2>&1 || true
			exit 1
		fi
		sleep 0.2
	done
	echo "kube-env: ready at https://127.0.0.1:$api_port; KUBECONFIG=$dir/kubeconfig" >&2
}

stop_process() {
	local pid_file=$1 pid
	[[ -f $pid_file ]] || return 0
	pid=$(cat "$pid_file")
	if kill -TERM "$pid" 2>/dev/null; then
		for _ in $(seq 100); do
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
	stop_process "$dir/kube-apiserver.pid"
	stop_process "$dir/etcd.pid"
	rm -rf "$dir"
}

cmd_env() {
	local dir=${1:-${CAPW_KUBE_ENV_DIR:-.kube-env}}
	[[ -f $dir/kubeconfig ]] || die "no environment started in $dir"
	dir=$(cd "$dir" && pwd)
	echo "export KUBECONFIG=$dir/kubeconfig PATH=$bin_dir:\$PATH"
}

case ${1:-} in
build) cmd_build ;;
start) cmd_start "${2:-}" ;;
stop) cmd_stop "${2:-}" ;;
env) cmd_env "${2:-}" ;;
bin-dir) echo "$bin_dir" ;;
*)
	sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//' >&2
	exit 2
	;;
esac
