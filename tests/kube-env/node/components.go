package main

import (
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"
)

// flagSet is an ordered set of --name=value flags where a later value for a name replaces an
// earlier one, as kubeadm's extraArgs override its defaults.
type flagSet struct {
	order  []string
	values map[string]string
}

func newFlagSet() *flagSet { return &flagSet{values: map[string]string{}} }

func (f *flagSet) set(name, value string) {
	if _, ok := f.values[name]; !ok {
		f.order = append(f.order, name)
	}
	f.values[name] = value
}

func (f *flagSet) apply(extra []extraArg) {
	for _, a := range extra {
		f.set(a.Name, a.Value)
	}
}

func (f *flagSet) args() []string {
	out := make([]string, 0, len(f.order))
	for _, name := range f.order {
		out = append(out, "--"+name+"="+f.values[name])
	}
	return out
}

// etcdMember is a member of the etcd cluster by name and peer URL, for --initial-cluster.
type etcdMember struct{ Name, PeerURL string }

func initialCluster(members []etcdMember) string {
	parts := make([]string, 0, len(members))
	for _, mem := range members {
		parts = append(parts, mem.Name+"="+mem.PeerURL)
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}

// etcdArgs are the flags of kubeadm's etcd static pod (phases/etcd/local.go), bound to the
// machine's address instead of 127.0.0.1 and the advertise address both. clusterState is "new"
// for the first member, "existing" for one added to a running cluster.
func etcdArgs(m machine, s clusterSettings, members []etcdMember, clusterState string) []string {
	f := newFlagSet()
	f.set("name", m.Name)
	f.set("data-dir", m.etcdDataDir())
	f.set("listen-client-urls", m.etcdClientURL())
	f.set("advertise-client-urls", m.etcdClientURL())
	f.set("listen-peer-urls", m.etcdPeerURL())
	f.set("initial-advertise-peer-urls", m.etcdPeerURL())
	f.set("listen-metrics-urls", "http://"+net.JoinHostPort(m.Address, "2381"))
	f.set("initial-cluster", initialCluster(members))
	if clusterState == "existing" {
		f.set("initial-cluster-state", "existing")
	}
	f.set("cert-file", m.pki("etcd/server.crt"))
	f.set("key-file", m.pki("etcd/server.key"))
	f.set("trusted-ca-file", m.pki("etcd/ca.crt"))
	f.set("client-cert-auth", "true")
	f.set("peer-cert-file", m.pki("etcd/peer.crt"))
	f.set("peer-key-file", m.pki("etcd/peer.key"))
	f.set("peer-trusted-ca-file", m.pki("etcd/ca.crt"))
	f.set("peer-client-cert-auth", "true")
	f.set("snapshot-count", "10000")
	f.set("watch-progress-notify-interval", "5s")
	f.apply(s.EtcdExtraArgs)
	return f.args()
}

// apiServerArgs are the flags of kubeadm's kube-apiserver static pod
// (phases/controlplane/manifests.go), served on the machine's address only.
func apiServerArgs(m machine, s clusterSettings) []string {
	f := newFlagSet()
	f.set("advertise-address", m.Address)
	f.set("bind-address", m.Address)
	f.set("secure-port", strconv.Itoa(s.BindPort))
	f.set("allow-privileged", "true")
	f.set("authorization-mode", "Node,RBAC")
	f.set("client-ca-file", m.pki("ca.crt"))
	f.set("enable-admission-plugins", "NodeRestriction")
	f.set("enable-bootstrap-token-auth", "true")
	f.set("etcd-cafile", m.pki("etcd/ca.crt"))
	f.set("etcd-certfile", m.pki("apiserver-etcd-client.crt"))
	f.set("etcd-keyfile", m.pki("apiserver-etcd-client.key"))
	f.set("etcd-servers", m.etcdClientURL())
	f.set("kubelet-client-certificate", m.pki("apiserver-kubelet-client.crt"))
	f.set("kubelet-client-key", m.pki("apiserver-kubelet-client.key"))
	f.set("kubelet-preferred-address-types", "InternalIP,ExternalIP,Hostname")
	f.set("proxy-client-cert-file", m.pki("front-proxy-client.crt"))
	f.set("proxy-client-key-file", m.pki("front-proxy-client.key"))
	f.set("requestheader-allowed-names", "front-proxy-client")
	f.set("requestheader-client-ca-file", m.pki("front-proxy-ca.crt"))
	f.set("requestheader-extra-headers-prefix", "X-Remote-Extra-")
	f.set("requestheader-group-headers", "X-Remote-Group")
	f.set("requestheader-username-headers", "X-Remote-User")
	f.set("service-account-issuer", "https://kubernetes.default.svc."+s.DNSDomain)
	f.set("service-account-key-file", m.pki("sa.pub"))
	f.set("service-account-signing-key-file", m.pki("sa.key"))
	f.set("service-cluster-ip-range", s.ServiceSubnet)
	f.set("tls-cert-file", m.pki("apiserver.crt"))
	f.set("tls-private-key-file", m.pki("apiserver.key"))
	f.apply(s.APIServerExtraArgs)
	return f.args()
}

// controllerManagerArgs are the flags of kubeadm's kube-controller-manager static pod, with the
// controllers kubeadm enables (bootstrap-token signing and cleaning) and CSR signing by the
// cluster CA.
func controllerManagerArgs(m machine, s clusterSettings) []string {
	kubeconfig := m.rootfs("/etc/kubernetes/controller-manager.conf")
	f := newFlagSet()
	f.set("bind-address", m.Address)
	f.set("secure-port", "10257")
	f.set("kubeconfig", kubeconfig)
	f.set("authentication-kubeconfig", kubeconfig)
	f.set("authorization-kubeconfig", kubeconfig)
	f.set("client-ca-file", m.pki("ca.crt"))
	f.set("requestheader-client-ca-file", m.pki("front-proxy-ca.crt"))
	f.set("root-ca-file", m.pki("ca.crt"))
	f.set("service-account-private-key-file", m.pki("sa.key"))
	f.set("cluster-signing-cert-file", m.pki("ca.crt"))
	f.set("cluster-signing-key-file", m.pki("ca.key"))
	f.set("cluster-name", s.ClusterName)
	f.set("controllers", "*,bootstrapsigner,tokencleaner")
	f.set("leader-elect", "true")
	f.set("use-service-account-credentials", "true")
	f.set("service-cluster-ip-range", s.ServiceSubnet)
	if s.PodSubnet != "" {
		f.set("allocate-node-cidrs", "true")
		f.set("cluster-cidr", s.PodSubnet)
	}
	f.apply(s.ControllerExtraArgs)
	return f.args()
}

// schedulerArgs are the flags of kubeadm's kube-scheduler static pod (getSchedulerCommand in
// phases/controlplane/manifests.go), served on the machine's address.
func schedulerArgs(m machine, s clusterSettings) []string {
	kubeconfig := m.rootfs("/etc/kubernetes/scheduler.conf")
	f := newFlagSet()
	f.set("bind-address", m.Address)
	f.set("secure-port", "10259")
	f.set("leader-elect", "true")
	f.set("kubeconfig", kubeconfig)
	f.set("authentication-kubeconfig", kubeconfig)
	f.set("authorization-kubeconfig", kubeconfig)
	f.apply(s.SchedulerExtraArgs)
	return f.args()
}

func (s clusterSettings) String() string {
	return fmt.Sprintf("cluster %s %s (services %s, pods %s)", s.ClusterName, s.KubernetesVersion, s.ServiceSubnet, s.PodSubnet)
}
