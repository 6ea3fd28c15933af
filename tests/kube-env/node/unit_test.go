package main

import (
	"slices"
	"strings"
	"testing"
)

var testMachine = machine{Root: "/m", BinDir: "/bin", Address: "127.1.0.2", Role: roleInit, Name: "cp-1", ProviderID: "simcloud://x/cp-1"}

const testInitData = `apiVersion: kubeadm.k8s.io/v1beta4
kind: InitConfiguration
nodeRegistration:
  name: placeholder
---
apiVersion: kubeadm.k8s.io/v1beta4
kind: ClusterConfiguration
clusterName: alpha
controlPlaneEndpoint: 127.1.0.1:6443
networking:
  podSubnet: 10.244.0.0/16
apiServer:
  extraArgs:
  - name: authorization-mode
    value: Node,RBAC,AlwaysAllow
scheduler:
  extraArgs:
  - name: leader-elect-lease-duration
    value: 30s
---
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
`

func deriveTestConfig(t *testing.T) derivedConfig {
	t.Helper()
	docs, err := parseKubeadmDocs([]byte(testInitData))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := deriveMachineConfig(testMachine, findDoc(docs, "InitConfiguration"), nil, findDoc(docs, "ClusterConfiguration"), docs, "v1.35.4")
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func TestTheDerivedConfigPutsTheMachinesFilesUnderItsDirectoryAndAdvertisesItsAddress(t *testing.T) {
	cfg := deriveTestConfig(t)
	init, cluster := findDoc(cfg.Docs, "InitConfiguration"), findDoc(cfg.Docs, "ClusterConfiguration")
	for _, c := range []struct{ got, want string }{
		{init.str("localAPIEndpoint", "advertiseAddress"), "127.1.0.2"},
		{init.str("localAPIEndpoint", "bindPort"), "6443"},
		{init.str("nodeRegistration", "name"), "cp-1"},
		{cluster.str("certificatesDir"), "/m/rootfs/etc/kubernetes/pki"},
		{cluster.str("etcd", "local", "dataDir"), "/m/rootfs/var/lib/etcd"},
		{cluster.str("kubernetesVersion"), "v1.35.4"},
		{cluster.str("controlPlaneEndpoint"), "127.1.0.1:6443"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
	if findDoc(cfg.Docs, "KubeletConfiguration") == nil {
		t.Error("the KubeletConfiguration was dropped")
	}
	s := cfg.Settings
	if s.ClusterName != "alpha" || s.ServiceSubnet != "10.96.0.0/12" || s.PodSubnet != "10.244.0.0/16" || s.BindPort != 6443 {
		t.Errorf("settings %+v", s)
	}
}

func TestAJoiningControlPlaneTakesItsNodeRegistrationAndPortFromItsJoinConfiguration(t *testing.T) {
	docs, err := parseKubeadmDocs([]byte(`apiVersion: kubeadm.k8s.io/v1beta4
kind: JoinConfiguration
nodeRegistration:
  taints: []
controlPlane:
  localAPIEndpoint:
    bindPort: 7443
`))
	if err != nil {
		t.Fatal(err)
	}
	cluster := kubeadmDoc{"apiVersion": "kubeadm.k8s.io/v1beta4", "kind": "ClusterConfiguration"}
	m := testMachine
	m.Address, m.Name = "127.1.0.3", "cp-2"
	cfg, err := deriveMachineConfig(m, nil, docs[0], cluster, nil, "v1.35.4")
	if err != nil {
		t.Fatal(err)
	}
	init := findDoc(cfg.Docs, "InitConfiguration")
	if init.str("localAPIEndpoint", "bindPort") != "7443" || init.str("nodeRegistration", "name") != "cp-2" {
		t.Errorf("InitConfiguration %v", init)
	}
	if cfg.Settings.ControlPlaneEndpoint != "127.1.0.3:7443" {
		t.Errorf("endpoint %q", cfg.Settings.ControlPlaneEndpoint)
	}
}

func TestAnExternalEtcdIsRefused(t *testing.T) {
	cluster := kubeadmDoc{"kind": "ClusterConfiguration", "etcd": map[string]interface{}{"external": map[string]interface{}{}}}
	if _, err := deriveMachineConfig(testMachine, kubeadmDoc{"kind": "InitConfiguration"}, nil, cluster, nil, "v1.35.4"); err == nil || !strings.Contains(err.Error(), "external etcd") {
		t.Fatalf("err = %v", err)
	}
}

func TestTheComponentsFlagsAreKubeadmsBoundToTheMachinesAddress(t *testing.T) {
	s := deriveTestConfig(t).Settings
	api := apiServerArgs(testMachine, s)
	kcm := controllerManagerArgs(testMachine, s)
	scheduler := schedulerArgs(testMachine, s)
	etcd := etcdArgs(testMachine, s, []etcdMember{{"cp-1", "https://127.1.0.2:2380"}}, "new")
	for _, want := range []string{
		"--bind-address=127.1.0.2", "--advertise-address=127.1.0.2", "--secure-port=6443",
		"--enable-admission-plugins=NodeRestriction", "--enable-bootstrap-token-auth=true",
		"--service-cluster-ip-range=10.96.0.0/12", "--etcd-servers=https://127.1.0.2:2379",
		"--client-ca-file=/m/rootfs/etc/kubernetes/pki/ca.crt",
		// the ClusterConfiguration's extraArgs replace kubeadm's value
		"--authorization-mode=Node,RBAC,AlwaysAllow",
	} {
		if !slices.Contains(api, want) {
			t.Errorf("kube-apiserver lacks %s: %v", want, api)
		}
	}
	if n := countPrefix(api, "--authorization-mode="); n != 1 {
		t.Errorf("%d --authorization-mode flags", n)
	}
	for _, want := range []string{
		"--controllers=*,bootstrapsigner,tokencleaner", "--cluster-name=alpha", "--allocate-node-cidrs=true",
		"--cluster-cidr=10.244.0.0/16", "--cluster-signing-cert-file=/m/rootfs/etc/kubernetes/pki/ca.crt",
		"--cluster-signing-key-file=/m/rootfs/etc/kubernetes/pki/ca.key", "--use-service-account-credentials=true",
		"--leader-elect=true", "--bind-address=127.1.0.2",
	} {
		if !slices.Contains(kcm, want) {
			t.Errorf("kube-controller-manager lacks %s: %v", want, kcm)
		}
	}
	for _, want := range []string{
		"--bind-address=127.1.0.2", "--secure-port=10259", "--leader-elect=true",
		"--kubeconfig=/m/rootfs/etc/kubernetes/scheduler.conf",
		"--authentication-kubeconfig=/m/rootfs/etc/kubernetes/scheduler.conf",
		"--authorization-kubeconfig=/m/rootfs/etc/kubernetes/scheduler.conf",
		// from the ClusterConfiguration's scheduler.extraArgs
		"--leader-elect-lease-duration=30s",
	} {
		if !slices.Contains(scheduler, want) {
			t.Errorf("kube-scheduler lacks %s: %v", want, scheduler)
		}
	}
	for _, want := range []string{
		"--name=cp-1", "--listen-client-urls=https://127.1.0.2:2379", "--listen-peer-urls=https://127.1.0.2:2380",
		"--listen-metrics-urls=http://127.1.0.2:2381", "--initial-cluster=cp-1=https://127.1.0.2:2380",
		"--client-cert-auth=true", "--peer-client-cert-auth=true",
	} {
		if !slices.Contains(etcd, want) {
			t.Errorf("etcd lacks %s: %v", want, etcd)
		}
	}
	if countPrefix(etcd, "--initial-cluster-state=") != 0 {
		t.Error("the first member must not say --initial-cluster-state")
	}
	joining := etcdArgs(testMachine, s, []etcdMember{{"cp-2", "https://127.1.0.3:2380"}, {"cp-1", "https://127.1.0.2:2380"}}, "existing")
	for _, want := range []string{"--initial-cluster-state=existing", "--initial-cluster=cp-1=https://127.1.0.2:2380,cp-2=https://127.1.0.3:2380"} {
		if !slices.Contains(joining, want) {
			t.Errorf("a joining etcd lacks %s: %v", want, joining)
		}
	}
}

func countPrefix(args []string, prefix string) int {
	n := 0
	for _, a := range args {
		if strings.HasPrefix(a, prefix) {
			n++
		}
	}
	return n
}

func TestTheBackendsFileListsHostPortsAndSkipsBlanksAndComments(t *testing.T) {
	got, err := parseBackends("127.1.0.2:6443\n\n  # a comment\n 127.1.0.3:6443 \n")
	if err != nil || !slices.Equal(got, []string{"127.1.0.2:6443", "127.1.0.3:6443"}) {
		t.Fatalf("got %v, %v", got, err)
	}
	if _, err := parseBackends("127.1.0.2\n"); err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Fatalf("a line without a port: err = %v", err)
	}
}

func TestTheLoadBalancerPicksHealthyBackendsRoundRobin(t *testing.T) {
	var p backendPool
	if p.pick() != nil {
		t.Fatal("no healthy backend must give no pick")
	}
	p.set([]string{"a", "b", "c"})
	var firsts []string
	for i := 0; i < 4; i++ {
		firsts = append(firsts, p.pick()[0])
	}
	if !slices.Equal(firsts, []string{"a", "b", "c", "a"}) {
		t.Fatalf("first picks %v", firsts)
	}
}

func TestAJoinConfigurationWithoutCAPinningOrTokenIsRefused(t *testing.T) {
	for _, doc := range []kubeadmDoc{
		{"kind": "JoinConfiguration", "discovery": map[string]interface{}{"bootstrapToken": map[string]interface{}{"token": "abcdef.0123456789abcdef", "apiServerEndpoint": "127.1.0.1:6443"}}},
		{"kind": "JoinConfiguration", "discovery": map[string]interface{}{"bootstrapToken": map[string]interface{}{"apiServerEndpoint": "127.1.0.1:6443", "caCertHashes": []interface{}{"sha256:00"}}}},
		{"kind": "JoinConfiguration", "discovery": map[string]interface{}{"file": map[string]interface{}{}}},
	} {
		if _, err := joinDiscovery(doc); err == nil {
			t.Errorf("%v was accepted", doc)
		}
	}
}

func TestTheStatusFileHoldsOneLine(t *testing.T) {
	dir := t.TempDir()
	if err := writeStatus(dir, "failed: etcd did not\nbecome healthy"); err != nil {
		t.Fatal(err)
	}
	if got := lastLogLine(dir + "/status"); got != "failed: etcd did not become healthy" {
		t.Fatalf("status %q", got)
	}
}
