package main

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/kubernetes/cmd/kubeadm/app/util/pubkeypin"
)

// e2eBinDirEnv names the bin dir of a Kubernetes version (kube-env.sh bin-dir) for the
// end-to-end test; the agent is that dir's capw-node, or $CAPW_NODE_BIN, or built here.
const e2eBinDirEnv = "CAPW_NODE_E2E_BIN_DIR"

const e2eToken = "abcdef.0123456789abcdef"

type e2eMachine struct {
	name, addr, role, dir string
	cmd                   *exec.Cmd
	exited                chan error
}

func TestMachinesBootJoinAndResetAgainstRealBinaries(t *testing.T) {
	binDir := os.Getenv(e2eBinDirEnv)
	if binDir == "" {
		// In CI the suite sets it (scripts/suite.sh); a run there without it would pass having
		// tested nothing.
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is not set, and CI is: the suite must give the end-to-end test its binaries", e2eBinDirEnv)
		}
		t.Skipf("%s is not set: set it to a bin dir with kubeadm, etcd, kube-apiserver, kube-controller-manager and kube-scheduler (tests/kube-env/kube-env.sh bin-dir) to run the end-to-end test", e2eBinDirEnv)
	}
	agent := agentBinary(t, binDir)
	work := t.TempDir()
	run := func(name string, args ...string) string {
		t.Helper()
		out, err := exec.Command(name, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	kubeadmBin := filepath.Join(binDir, "kubeadm")
	version := strings.TrimSpace(run(kubeadmBin, "version", "-o", "short"))

	// The cluster's CAs, made as a bootstrap provider would, with kubeadm.
	caDir := filepath.Join(work, "cluster-pki")
	for _, phase := range []string{"ca", "etcd-ca", "front-proxy-ca", "sa"} {
		run(kubeadmBin, "init", "phase", "certs", phase, "--cert-dir", caDir)
	}
	caHash := caCertHash(t, filepath.Join(caDir, "ca.crt"))

	lbAddr := "127.1.0.1:6443"
	initDocs := fmt.Sprintf(`apiVersion: kubeadm.k8s.io/v1beta4
kind: InitConfiguration
bootstrapTokens:
- token: %s
  ttl: 24h0m0s
  usages: [signing, authentication]
  groups: [system:bootstrappers:kubeadm:default-node-token]
nodeRegistration:
  name: placeholder
---
apiVersion: kubeadm.k8s.io/v1beta4
kind: ClusterConfiguration
clusterName: e2e
kubernetesVersion: %s
controlPlaneEndpoint: %s
networking:
  serviceSubnet: 10.96.0.0/12
  podSubnet: 10.244.0.0/16
`, e2eToken, version, lbAddr)
	joinDoc := func(controlPlane bool) string {
		doc := fmt.Sprintf(`apiVersion: kubeadm.k8s.io/v1beta4
kind: JoinConfiguration
discovery:
  bootstrapToken:
    token: %s
    apiServerEndpoint: %s
    caCertHashes: [%s]
`, e2eToken, lbAddr, caHash)
		if controlPlane {
			doc += "controlPlane:\n  localAPIEndpoint:\n    bindPort: 6443\n"
		}
		return doc
	}

	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	backends := filepath.Join(work, "backends")
	writeFile(t, backends, "")
	lb := exec.Command(agent, "lb", "--listen", lbAddr, "--backends", backends)
	lb.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	lb.Stderr = os.Stderr
	if err := lb.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = syscall.Kill(-lb.Process.Pid, syscall.SIGKILL) }()

	var machines []*e2eMachine
	defer func() {
		for _, m := range machines {
			_ = syscall.Kill(-m.cmd.Process.Pid, syscall.SIGKILL)
		}
	}()
	boot := func(name, addr, role, bootstrapData string) *e2eMachine {
		t.Helper()
		dir := filepath.Join(work, name)
		pki := filepath.Join(dir, "rootfs/etc/kubernetes/pki")
		files := []string{"ca.crt"}
		if role != roleWorker {
			files = caFiles
		}
		for _, f := range files {
			data, err := os.ReadFile(filepath.Join(caDir, f))
			if err != nil {
				t.Fatal(err)
			}
			writeFile(t, filepath.Join(pki, f), string(data))
		}
		writeFile(t, filepath.Join(dir, "rootfs/run/kubeadm/kubeadm.yaml"), bootstrapData)
		cmd := exec.Command(agent, "boot", "--root", dir, "--bin-dir", binDir, "--address", addr,
			"--role", role, "--name", name, "--provider-id", "simcloud://e2e/"+name)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		m := &e2eMachine{name: name, addr: addr, role: role, dir: dir, cmd: cmd, exited: make(chan error, 1)}
		go func() { m.exited <- cmd.Wait() }()
		machines = append(machines, m)
		waitReady(t, m, 5*time.Minute)
		return m
	}

	cp1 := boot("cp-1", "127.1.0.2", roleInit, initDocs)
	writeFile(t, backends, "127.1.0.2:6443\n")
	cp2 := boot("cp-2", "127.1.0.3", roleJoinControlPlane, joinDoc(true))
	writeFile(t, backends, "127.1.0.2:6443\n127.1.0.3:6443\n")
	if n := etcdMemberCount(t, cp1); n != 2 {
		t.Fatalf("etcd has %d members after the control-plane join, want 2", n)
	}
	w1 := boot("worker-1", "127.1.0.4", roleWorker, joinDoc(false))

	// Through the load balancer, with the admin kubeconfig kubeadm made.
	admin, err := clientFromFile(filepath.Join(cp1.dir, "rootfs/etc/kubernetes/admin.conf"), "")
	if err != nil {
		t.Fatal(err)
	}
	nodes, err := admin.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("listing Nodes through the load balancer: %v", err)
	}
	if len(nodes.Items) != 3 {
		t.Fatalf("%d Nodes, want 3", len(nodes.Items))
	}
	for _, n := range nodes.Items {
		if want := "simcloud://e2e/" + n.Name; n.Spec.ProviderID != want {
			t.Errorf("Node %s has providerID %q, want %q", n.Name, n.Spec.ProviderID, want)
		}
		if !nodeReady(&n) {
			t.Errorf("Node %s is not Ready", n.Name)
		}
	}
	if _, err := admin.CoordinationV1().Leases("kube-node-lease").Get(ctx, w1.name, metav1.GetOptions{}); err != nil {
		t.Errorf("the worker's Lease: %v", err)
	}
	checkPods(ctx, t, admin, w1)
	for _, p := range processesMentioning(cp1.dir) {
		if strings.Contains(p, "/kube-scheduler ") {
			t.Logf("kube-scheduler of %s: %s", cp1.name, processRSS(p))
		}
	}

	// Removing the joined control plane: its etcd member goes first, and a second reset is a no-op.
	for i := 0; i < 2; i++ {
		run(agent, "reset", "--root", cp2.dir, "--bin-dir", binDir)
	}
	if n := etcdMemberCount(t, cp1); n != 1 {
		t.Fatalf("etcd has %d members after reset, want 1", n)
	}
	run(agent, "reset", "--root", w1.dir, "--bin-dir", binDir)

	for _, m := range machines {
		_ = m.cmd.Process.Signal(syscall.SIGTERM)
	}
	for _, m := range machines {
		select {
		case err := <-m.exited:
			if err != nil {
				t.Errorf("%s's agent ended with %v after SIGTERM, want exit 0", m.name, err)
			}
		case <-time.After(60 * time.Second):
			t.Errorf("%s's agent did not stop within 60s of SIGTERM", m.name)
		}
	}
	_ = lb.Process.Signal(syscall.SIGTERM)
	if err := lb.Wait(); err != nil {
		t.Errorf("the load balancer ended with %v after SIGTERM", err)
	}
	if left := processesMentioning(work); len(left) > 0 {
		t.Errorf("processes left after SIGTERM: %s", strings.Join(left, "; "))
	}
	for _, addr := range []string{lbAddr, "127.1.0.2:6443", "127.1.0.2:2379", "127.1.0.3:6443", "127.1.0.3:2379", "127.1.0.2:10257", "127.1.0.2:10259", "127.1.0.3:10259"} {
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.Close()
			t.Errorf("%s still accepts connections", addr)
		}
	}
}

// checkPods runs Pods on the worker: the kubelet stand-in runs one of the pause image, leaves
// one of another image Pending, runs one kube-scheduler placed, and finishes a deleted one
// well within its grace period.
func checkPods(ctx context.Context, t *testing.T, admin kubernetes.Interface, worker *e2eMachine) {
	t.Helper()
	pods := admin.CoreV1().Pods("default")
	pod := func(name, image, nodeName string) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: corev1.PodSpec{
				NodeName:   nodeName,
				Containers: []corev1.Container{{Name: "main", Image: image}},
			},
		}
	}
	// Until the controller manager made the namespace's default ServiceAccount, the API server
	// refuses Pods.
	create := func(p *corev1.Pod) {
		t.Helper()
		var err error
		for i := 0; i < 60; i++ {
			if _, err = pods.Create(ctx, p, metav1.CreateOptions{}); err == nil {
				return
			}
			time.Sleep(time.Second)
		}
		t.Fatalf("creating Pod %s: %v", p.Name, err)
	}
	wait := func(name, what string, timeout time.Duration, done func(*corev1.Pod) bool) *corev1.Pod {
		t.Helper()
		start := time.Now()
		var last *corev1.Pod
		for time.Since(start) < timeout {
			p, err := pods.Get(ctx, name, metav1.GetOptions{})
			if err == nil && done(p) {
				t.Logf("Pod %s %s after %s", name, what, time.Since(start).Round(100*time.Millisecond))
				return p
			}
			last = p
			time.Sleep(200 * time.Millisecond)
		}
		t.Fatalf("Pod %s not %s within %s: %+v", name, what, timeout, last)
		return nil
	}
	create(pod("pause", "registry.k8s.io/pause:3.10", worker.name))
	create(pod("nginx", "nginx", worker.name))
	create(pod("scheduled", "registry.k8s.io/pause:3.10", ""))

	running := wait("pause", "Running and Ready", 30*time.Second, podReady)
	if running.Status.HostIP != worker.addr || !strings.HasPrefix(running.Status.PodIP, "10.244.") {
		t.Errorf("the pause Pod has hostIP %q, podIP %q", running.Status.HostIP, running.Status.PodIP)
	}
	pending := wait("nginx", "waiting with "+imageNotRunnable, 30*time.Second, func(p *corev1.Pod) bool {
		return len(p.Status.ContainerStatuses) == 1 && p.Status.ContainerStatuses[0].State.Waiting != nil &&
			p.Status.ContainerStatuses[0].State.Waiting.Reason == imageNotRunnable
	})
	if pending.Status.Phase != corev1.PodPending || podReady(pending) {
		t.Errorf("the nginx Pod is %s, ready %v", pending.Status.Phase, podReady(pending))
	}
	scheduled := wait("scheduled", "scheduled and Ready", 60*time.Second, podReady)
	if scheduled.Spec.NodeName != worker.name {
		t.Errorf("the scheduled Pod is on %q, want %q (the only untainted Node)", scheduled.Spec.NodeName, worker.name)
	}

	// The status of a Pod is written once: after a few of the stand-in's syncs, none changed.
	time.Sleep(3 * podSyncInterval)
	for _, p := range []*corev1.Pod{running, pending, scheduled} {
		now, err := pods.Get(ctx, p.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if now.ResourceVersion != p.ResourceVersion {
			t.Errorf("Pod %s was written again (resourceVersion %s, then %s)", p.Name, p.ResourceVersion, now.ResourceVersion)
		}
	}

	if err := pods.Delete(ctx, "pause", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	for {
		_, err := pods.Get(ctx, "pause", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			t.Logf("the deleted pause Pod was gone after %s", time.Since(start).Round(100*time.Millisecond))
			break
		}
		if time.Since(start) > 30*time.Second {
			t.Fatalf("the deleted pause Pod is still there after its grace period (30s): %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func podReady(p *corev1.Pod) bool {
	if p.Status.Phase != corev1.PodRunning {
		return false
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// processRSS is the resident set size of the process a processesMentioning line names.
func processRSS(line string) string {
	pid, _, _ := strings.Cut(line, ":")
	status, err := os.ReadFile(filepath.Join("/proc", pid, "status"))
	if err != nil {
		return "unknown RSS"
	}
	for _, l := range strings.Split(string(status), "\n") {
		if strings.HasPrefix(l, "VmRSS:") {
			return "RSS " + strings.Join(strings.Fields(strings.TrimPrefix(l, "VmRSS:")), " ")
		}
	}
	return "unknown RSS"
}

func agentBinary(t *testing.T, binDir string) string {
	if p := os.Getenv("CAPW_NODE_BIN"); p != "" {
		return p
	}
	if p := filepath.Join(binDir, "capw-node"); fileExists(p) {
		return p
	}
	out := filepath.Join(t.TempDir(), "capw-node")
	cmd := exec.Command("go", "build", "-o", out, ".")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building capw-node: %v\n%s", err, b)
	}
	return out
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}

func caCertHash(t *testing.T, path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(data)
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return pubkeypin.Hash(cert)
}

func waitReady(t *testing.T, m *e2eMachine, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		status, _ := os.ReadFile(filepath.Join(m.dir, "status"))
		s := strings.TrimSpace(string(status))
		switch {
		case s == "ready":
			t.Logf("%s is ready", m.name)
			return
		case strings.HasPrefix(s, "failed"):
			t.Fatalf("%s: %s", m.name, s)
		}
		select {
		case err := <-m.exited:
			status, _ := os.ReadFile(filepath.Join(m.dir, "status"))
			t.Fatalf("%s's agent exited (%v) with status %q", m.name, err, strings.TrimSpace(string(status)))
		case <-time.After(time.Second):
		}
	}
	t.Fatalf("%s not ready within %s; agent log:\n%s", m.name, timeout, lastLogLine(filepath.Join(m.dir, "logs/capw-node.log")))
}

func etcdMemberCount(t *testing.T, cp *e2eMachine) int {
	t.Helper()
	cli, err := etcdClient(filepath.Join(cp.dir, "rootfs/etc/kubernetes/pki"), []string{"https://" + cp.addr + ":2379"})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	list, err := cli.MemberList(ctx)
	if err != nil {
		t.Fatalf("etcd member list: %v", err)
	}
	return len(list.Members)
}

func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// processesMentioning lists the running processes whose command line contains s.
func processesMentioning(s string) []string {
	entries, _ := os.ReadDir("/proc")
	var out []string
	for _, e := range entries {
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !strings.Contains(string(cmdline), s) {
			continue
		}
		out = append(out, e.Name()+": "+strings.ReplaceAll(string(cmdline), "\x00", " "))
	}
	return out
}
