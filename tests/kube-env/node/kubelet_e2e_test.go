package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
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
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
)

// TestTheProcessKubeletRunsAPodAgainstARealAPIServer runs `capw-node kubelet` (this test
// binary, through TestMain) against the real kube-apiserver of kube-env.sh: the Node
// registers Ready, a Pod bound to it gets a service account token from the TokenRequest API,
// serves on its own address of the pod CIDR (the local route) and turns Ready through its
// readiness probe; deleted, it goes; on SIGTERM the kubelet removes the route.
func TestTheProcessKubeletRunsAPodAgainstARealAPIServer(t *testing.T) {
	if os.Getenv(e2eBinDirEnv) == "" {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is not set, and CI is: the suite must give the end-to-end test its binaries", e2eBinDirEnv)
		}
		t.Skipf("%s is not set: the process kubelet's end-to-end test needs kube-env.sh's binaries", e2eBinDirEnv)
	}
	if os.Geteuid() != 0 {
		t.Skip("the process kubelet needs root (routes, mount namespaces)")
	}
	kubeEnv, err := filepath.Abs("../kube-env.sh")
	if err != nil {
		t.Fatal(err)
	}
	envDir := filepath.Join(t.TempDir(), "kube-env")
	start := exec.Command(kubeEnv, "start", envDir)
	start.Env = append(os.Environ(), "CAPW_KUBE_ENV_WORKLOADS=", fmt.Sprintf("CAPW_KUBE_ENV_OWNER_PID=%d", os.Getpid()))
	if out, err := start.CombinedOutput(); err != nil {
		t.Fatalf("kube-env.sh start: %v\n%s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command(kubeEnv, "stop", envDir).Run() })
	kubeconfig := filepath.Join(envDir, "kubeconfig")
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	client := kubernetes.NewForConfigOrDie(cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	// No kube-controller-manager runs: make what its controllers would.
	ca, err := os.ReadFile(filepath.Join(envDir, "pki", "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.CoreV1().ServiceAccounts("default").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	if _, err := client.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "kube-root-ca.crt"}, Data: map[string]string{"ca.crt": string(ca)}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}

	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	images := filepath.Join(root, "images.json")
	writeFile(t, images, `[{"image": "example.com/server", "binary": "`+self+`"}]`)
	cidr := fmt.Sprintf("100.126.%d.0/24", rand.IntN(256))
	kubelet := exec.Command(self, "kubelet", "--kubeconfig", kubeconfig, "--name", "e2e-kubelet", "--root", filepath.Join(root, "node"),
		"--images", images, "--pod-cidr", cidr)
	logFile, err := os.Create(filepath.Join(root, "kubelet.log"))
	if err != nil {
		t.Fatal(err)
	}
	kubelet.Stdout, kubelet.Stderr = logFile, logFile
	if err := kubelet.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- kubelet.Wait() }()
	t.Cleanup(func() {
		_ = kubelet.Process.Kill()
		if t.Failed() {
			log, _ := os.ReadFile(logFile.Name())
			t.Logf("the kubelet's log:\n%s", log)
		}
	})

	waitFor := func(what string, cond func() bool) {
		t.Helper()
		for !cond() {
			if ctx.Err() != nil {
				t.Fatalf("%s: not in time", what)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	waitFor("the Node Ready", func() bool {
		n, err := client.CoreV1().Nodes().Get(ctx, "e2e-kubelet", metav1.GetOptions{})
		return err == nil && nodeReady(n) && n.Spec.PodCIDR == cidr
	})

	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "server", Namespace: "default"},
		Spec: corev1.PodSpec{
			NodeName:                      "e2e-kubelet",
			TerminationGracePeriodSeconds: ptr.To(int64(5)),
			Containers: []corev1.Container{{
				Name: "server", Image: "example.com/server:1.0",
				Env: []corev1.EnvVar{
					{Name: "CAPW_NODE_TEST_PROGRAM", Value: "http-ready"},
					{Name: "POD_IP", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.podIP"}}},
					{Name: "LISTEN", Value: "$(POD_IP):8080"},
					{Name: "READY_FILE", Value: "/var/run/secrets/kubernetes.io/serviceaccount/token"},
				},
				ReadinessProbe: &corev1.Probe{
					ProbeHandler:  corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/ready", Port: intstr.FromInt32(8080)}},
					PeriodSeconds: 1,
				},
			}},
		},
	}
	if _, err := client.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var got *corev1.Pod
	waitFor("the Pod Ready", func() bool {
		got, err = client.CoreV1().Pods("default").Get(ctx, "server", metav1.GetOptions{})
		return err == nil && podReady(got)
	})
	podIP := got.Status.PodIP
	if !strings.HasPrefix(podIP, strings.TrimSuffix(cidr, "0/24")) {
		t.Fatalf("podIP %q is not of %s", podIP, cidr)
	}
	resp, err := http.Get("http://" + podIP + ":8080/ready")
	if err != nil {
		t.Fatalf("the Pod's address does not answer from the machine: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("the Pod answers %d", resp.StatusCode)
	}

	if err := client.CoreV1().Pods("default").Delete(ctx, "server", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor("the deleted Pod gone", func() bool {
		_, err := client.CoreV1().Pods("default").Get(ctx, "server", metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})

	if err := kubelet.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("the kubelet exited with %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the kubelet did not exit on SIGTERM")
	}
	out, _ := exec.Command("ip", "route", "show", "table", "local").Output()
	if strings.Contains(string(out), cidr) {
		t.Errorf("the route of %s is left after the kubelet exited:\n%s", cidr, out)
	}
}
