package main

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"
)

// These tests run real processes through the pod runner, with a fake API: each Pod is fed to
// the sync, and its containers are /bin/sh or this test binary (TestMain).

// testBackoffBase is the crash back-off's first wait in these tests.
const testBackoffBase = 400 * time.Millisecond

// processKubelet is a process kubelet stand-in for Node worker-1 on a fake API holding objs,
// with an image table mapping test/sh to /bin/sh and test/self to this test binary.
func processKubelet(t *testing.T, objs ...runtime.Object) (*kubeletStandIn, *fake.Clientset) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("running containers needs root (mount namespaces)")
	}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "worker-1"}, Spec: corev1.NodeSpec{PodCIDR: "10.250.0.0/24"}}
	client := fake.NewClientset(append([]runtime.Object{node}, objs...)...)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	table, err := parseImageTable([]byte(`[
		{"image": "test/sh", "binary": "/bin/sh"},
		{"image": "test/self", "binary": "` + self + `"}
	]`))
	if err != nil {
		t.Fatal(err)
	}
	rt, err := newProcessRuntime(t.TempDir(), table, client)
	if err != nil {
		t.Fatal(err)
	}
	rt.backoffBase = testBackoffBase
	k := &kubeletStandIn{client: client, name: "worker-1", address: "127.0.0.1", podCIDR: "10.250.0.0/24", runtime: rt}
	t.Cleanup(rt.stopAll)
	return k, client
}

// shPod is a Pod of one container "c" running script with /bin/sh.
func shPod(name, script string) *corev1.Pod {
	pod := testPod(name, "test/sh:1")
	pod.Spec.Containers[0].Name = "c"
	pod.Spec.Containers[0].Command = []string{"sh", "-c", script}
	pod.Spec.TerminationGracePeriodSeconds = ptr.To(int64(1))
	return pod
}

// syncUntil syncs the runner until cond holds for the Pod (then returns it) or timeout passes.
func syncUntil(t *testing.T, k *kubeletStandIn, client *fake.Clientset, name string, timeout time.Duration, what string, cond func(*corev1.Pod) bool) *corev1.Pod {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(timeout)
	var last *corev1.Pod
	for {
		k.syncPods(ctx)
		pod, err := client.CoreV1().Pods("default").Get(ctx, name, metav1.GetOptions{})
		if err == nil {
			last = pod
			if cond(pod) {
				return pod
			}
		} else if apierrors.IsNotFound(err) && cond(nil) {
			return nil
		}
		if time.Now().After(deadline) {
			if last != nil {
				t.Fatalf("Pod %s: %s: not within %s; last status %+v", name, what, timeout, last.Status)
			}
			t.Fatalf("Pod %s: %s: not within %s", name, what, timeout)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func mainStatus(pod *corev1.Pod) corev1.ContainerStatus {
	if pod == nil || len(pod.Status.ContainerStatuses) == 0 {
		return corev1.ContainerStatus{}
	}
	return pod.Status.ContainerStatuses[0]
}

func running(pod *corev1.Pod) bool { return mainStatus(pod).State.Running != nil }

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func TestAReadinessProbeKeepsAPodUnreadyUntilItPasses(t *testing.T) {
	port := freePort(t)
	readyFile := filepath.Join(t.TempDir(), "ready")
	pod := testPod("web", "test/self:1")
	pod.Spec.HostNetwork = true
	pod.Spec.Containers[0].Env = []corev1.EnvVar{
		{Name: "CAPW_NODE_TEST_PROGRAM", Value: "http-ready"},
		{Name: "LISTEN", Value: "127.0.0.1:" + strconv.Itoa(port)},
		{Name: "READY_FILE", Value: readyFile},
	}
	pod.Spec.Containers[0].ReadinessProbe = &corev1.Probe{
		ProbeHandler:  corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/ready", Port: intstr.FromInt32(int32(port))}},
		PeriodSeconds: 1, FailureThreshold: 1,
	}
	k, client := processKubelet(t, pod)

	got := syncUntil(t, k, client, "web", 10*time.Second, "running", running)
	if got.Status.PodIP != "127.0.0.1" || got.Status.Phase != corev1.PodRunning {
		t.Fatalf("a host-network Pod's status %+v", got.Status)
	}
	// Probed several times while the server answers 503: never Ready.
	deadline := time.Now().Add(2500 * time.Millisecond)
	for time.Now().Before(deadline) {
		k.syncPods(context.Background())
		got, _ = client.CoreV1().Pods("default").Get(context.Background(), "web", metav1.GetOptions{})
		if condition(got.Status, corev1.PodReady) == corev1.ConditionTrue || mainStatus(got).Ready {
			t.Fatalf("Ready while its readiness probe fails: %+v", got.Status)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if condition(got.Status, corev1.ContainersReady) != corev1.ConditionFalse {
		t.Fatalf("ContainersReady %q while the probe fails", condition(got.Status, corev1.ContainersReady))
	}
	if err := os.WriteFile(readyFile, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	got = syncUntil(t, k, client, "web", 5*time.Second, "Ready", func(p *corev1.Pod) bool {
		return condition(p.Status, corev1.PodReady) == corev1.ConditionTrue
	})
	if condition(got.Status, corev1.ContainersReady) != corev1.ConditionTrue || !mainStatus(got).Ready {
		t.Errorf("Ready without its container ready: %+v", got.Status)
	}
}

func TestALivenessFailureKillsAndRestartsTheContainer(t *testing.T) {
	alive := filepath.Join(t.TempDir(), "alive")
	if err := os.WriteFile(alive, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	pod := shPod("live", "while :; do sleep 0.1; done")
	pod.Spec.Containers[0].LivenessProbe = &corev1.Probe{
		ProbeHandler:        corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"test", "-f", alive}}},
		InitialDelaySeconds: 1, PeriodSeconds: 1, FailureThreshold: 1,
	}
	k, client := processKubelet(t, pod)
	got := syncUntil(t, k, client, "live", 10*time.Second, "running", running)
	firstPid := k.runtime.workers[got.UID].pid("c")
	time.Sleep(2 * time.Second) // probed while alive: no restart
	got = syncUntil(t, k, client, "live", time.Second, "running", running)
	if n := mainStatus(got).RestartCount; n != 0 {
		t.Fatalf("restarted %d times while its liveness probe passes", n)
	}

	if err := os.Remove(alive); err != nil {
		t.Fatal(err)
	}
	got = syncUntil(t, k, client, "live", 10*time.Second, "restarted once", func(p *corev1.Pod) bool {
		return mainStatus(p).RestartCount == 1 && running(p)
	})
	if err := os.WriteFile(alive, nil, 0o644); err != nil { // the new instance stays alive
		t.Fatal(err)
	}
	last := mainStatus(got).LastTerminationState.Terminated
	if last == nil || last.ExitCode != 128+int32(syscall.SIGTERM) || !strings.Contains(last.Message, "failed Liveness probe") {
		t.Errorf("last state %+v", mainStatus(got).LastTerminationState)
	}
	if pid := k.runtime.workers[got.UID].pid("c"); pid == firstPid || pid == 0 {
		t.Errorf("the container runs as pid %d, as before the restart (%d)", pid, firstPid)
	}
	if err := syscall.Kill(firstPid, 0); err == nil {
		t.Errorf("the killed instance (pid %d) still runs", firstPid)
	}
}

func TestACrashingContainerIsRestartedWithTheKubeletsBackOff(t *testing.T) {
	starts := filepath.Join(t.TempDir(), "starts")
	pod := shPod("crash", "date +%s.%N >> "+starts+"; echo crashing; exit 3")
	k, client := processKubelet(t, pod)

	got := syncUntil(t, k, client, "crash", 10*time.Second, "in CrashLoopBackOff", func(p *corev1.Pod) bool {
		w := mainStatus(p).State.Waiting
		return w != nil && w.Reason == "CrashLoopBackOff"
	})
	st := mainStatus(got)
	if st.LastTerminationState.Terminated == nil || st.LastTerminationState.Terminated.ExitCode != 3 || st.LastTerminationState.Terminated.Reason != "Error" {
		t.Errorf("last state %+v", st.LastTerminationState)
	}
	if !strings.Contains(st.State.Waiting.Message, "back-off") || got.Status.Phase != corev1.PodRunning || st.Ready {
		t.Errorf("status %+v", got.Status)
	}
	syncUntil(t, k, client, "crash", 15*time.Second, "restarted 4 times", func(p *corev1.Pod) bool {
		return mainStatus(p).RestartCount >= 4
	})

	// The kubelet's back-off: the first restart at once, then base, then twice base.
	data, err := os.ReadFile(starts)
	if err != nil {
		t.Fatal(err)
	}
	var times []float64
	for _, line := range strings.Fields(string(data)) {
		f, err := strconv.ParseFloat(line, 64)
		if err != nil {
			t.Fatal(err)
		}
		times = append(times, f)
	}
	if len(times) < 4 {
		t.Fatalf("started %d times", len(times))
	}
	gap := func(i int) time.Duration { return time.Duration((times[i+1] - times[i]) * float64(time.Second)) }
	if gap(0) >= testBackoffBase {
		t.Errorf("the first restart waited %s", gap(0))
	}
	if gap(1) < testBackoffBase || gap(1) >= 2*testBackoffBase {
		t.Errorf("the second restart waited %s, want %s", gap(1), testBackoffBase)
	}
	if gap(2) < 2*testBackoffBase || gap(2) >= 4*testBackoffBase {
		t.Errorf("the third restart waited %s, want %s", gap(2), 2*testBackoffBase)
	}
	// Each instance's output is appended to the container's log.
	logData, err := os.ReadFile(filepath.Join(k.runtime.podDir(got), "c.log"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(logData), "crashing\n"); n < 4 {
		t.Errorf("the log holds %d runs:\n%s", n, logData)
	}
}

func TestADeletedPodsProcessGetsSIGTERMThenSIGKILLAfterItsGracePeriod(t *testing.T) {
	dir := t.TempDir()
	terms := filepath.Join(dir, "terms")
	pod := shPod("stubborn", `trap 'echo TERM >> `+terms+`' TERM; while :; do sleep 0.1; done`)
	k, client := processKubelet(t, pod)
	got := syncUntil(t, k, client, "stubborn", 10*time.Second, "running", running)
	pid := k.runtime.workers[got.UID].pid("c")
	time.Sleep(300 * time.Millisecond) // the shell sets its trap

	ctx := context.Background()
	got.DeletionTimestamp = ptr.To(metav1.Now())
	got.DeletionGracePeriodSeconds = ptr.To(int64(2))
	if _, err := client.CoreV1().Pods("default").Update(ctx, got, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	deleted := time.Now()
	k.syncPods(ctx)
	time.Sleep(time.Second)
	k.syncPods(ctx)
	if data, _ := os.ReadFile(terms); !strings.Contains(string(data), "TERM") {
		t.Fatalf("the process got no SIGTERM within a second of the deletion")
	}
	if err := syscall.Kill(pid, 0); err != nil {
		t.Fatalf("the process ignoring SIGTERM was gone before its grace period: %v", err)
	}
	got = syncUntil(t, k, client, "stubborn", 10*time.Second, "terminated", func(p *corev1.Pod) bool {
		return p == nil || mainStatus(p).State.Terminated != nil
	})
	elapsed := time.Since(deleted)
	if elapsed < 2*time.Second {
		t.Errorf("killed %s after the deletion, before its grace period of 2s", elapsed)
	}
	if got != nil {
		term := mainStatus(got).State.Terminated
		if term.ExitCode != 137 || got.Status.Phase != corev1.PodFailed {
			t.Errorf("terminated %+v, phase %s", term, got.Status.Phase)
		}
	}
	if err := syscall.Kill(pid, 0); err == nil {
		t.Errorf("pid %d still runs", pid)
	}
	syncUntil(t, k, client, "stubborn", 5*time.Second, "deleted", func(p *corev1.Pod) bool { return p == nil })
	if len(k.runtime.workers) != 0 {
		t.Errorf("the deleted Pod's worker is kept")
	}
}

func TestASecretVolumeAndTheServiceAccountTokenAreMountedOnlyInsideTheContainer(t *testing.T) {
	dir := t.TempDir()
	mnt := filepath.Join(dir, "mnt", "creds")
	out := filepath.Join(dir, "out")
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "creds", Namespace: "default"}, Data: map[string][]byte{"password": []byte("hunter2")}}
	pod := shPod("reader", `cat `+mnt+`/password > `+out+`.tmp
		if touch `+mnt+`/x 2>/dev/null; then echo writable; else echo read-only; fi >> `+out+`.tmp
		cat /var/run/secrets/kubernetes.io/serviceaccount/token >> `+out+`.tmp
		grep -c reader /etc/hosts >> `+out+`.tmp
		hostname >> `+out+`.tmp
		mv `+out+`.tmp `+out+`; sleep 30`)
	pod.Spec.Volumes = []corev1.Volume{
		{Name: "creds", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "creds"}}},
		{Name: "kube-api-access", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
			{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: ptr.To(int64(3607))}},
		}}}},
	}
	pod.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{
		{Name: "creds", MountPath: mnt, ReadOnly: true},
		{Name: "kube-api-access", MountPath: "/var/run/secrets/kubernetes.io/serviceaccount", ReadOnly: true},
	}
	k, client := processKubelet(t, secret, pod)
	var requested *authenticationv1.TokenRequest
	client.PrependReactor("create", "serviceaccounts", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() != "token" {
			return false, nil, nil
		}
		requested = a.(k8stesting.CreateAction).GetObject().(*authenticationv1.TokenRequest)
		return true, &authenticationv1.TokenRequest{Status: authenticationv1.TokenRequestStatus{
			Token: "the-token", ExpirationTimestamp: metav1.NewTime(time.Now().Add(time.Hour)),
		}}, nil
	})
	syncUntil(t, k, client, "reader", 10*time.Second, "running", running)
	deadline := time.Now().Add(10 * time.Second)
	var data []byte
	for {
		var err error
		if data, err = os.ReadFile(out); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the container wrote nothing: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	want := "hunter2read-only\nthe-token1\nreader\n"
	if string(data) != want {
		t.Errorf("the container saw %q, want %q", data, want)
	}
	if requested == nil || requested.Spec.BoundObjectRef == nil || requested.Spec.BoundObjectRef.Name != "reader" ||
		*requested.Spec.ExpirationSeconds != 3607 {
		t.Errorf("token request %+v", requested)
	}
	// The mount is the container's own: on the machine the mount point is an empty directory.
	entries, err := os.ReadDir(mnt)
	if err != nil || len(entries) != 0 {
		t.Errorf("the machine sees %v in %s (%v)", entries, mnt, err)
	}
	if _, err := os.Stat("/var/run/secrets/kubernetes.io/serviceaccount/token"); err == nil {
		t.Errorf("the token is visible on the machine")
	}
}

func TestAContainerRunsAsItsSecurityContextsUserAndGroups(t *testing.T) {
	pod := shPod("user", "sleep 30")
	pod.Spec.SecurityContext = &corev1.PodSecurityContext{RunAsUser: ptr.To(int64(1234)), RunAsGroup: ptr.To(int64(2345)), SupplementalGroups: []int64{3456}}
	pod.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{RunAsUser: ptr.To(int64(4321))}
	k, client := processKubelet(t, pod)
	got := syncUntil(t, k, client, "user", 10*time.Second, "running", running)
	pid := k.runtime.workers[got.UID].pid("c")
	// The process is container-exec until it execs the program, as the user.
	var fields map[string]string
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		status, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
		if err != nil {
			t.Fatal(err)
		}
		fields = map[string]string{}
		for _, line := range strings.Split(string(status), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok {
				fields[k] = strings.Join(strings.Fields(v), " ")
			}
		}
		if fields["Name"] == "sh" || fields["Name"] == "sleep" {
			break
		}
	}
	if fields["Uid"] != "4321 4321 4321 4321" || fields["Gid"] != "2345 2345 2345 2345" || fields["Groups"] != "3456" {
		t.Errorf("pid %d (%s) runs as Uid %q Gid %q Groups %q", pid, fields["Name"], fields["Uid"], fields["Gid"], fields["Groups"])
	}
}

func TestAnUnknownImageIsRefusedWithImageNotRunnableNamingIt(t *testing.T) {
	pod := testPod("unknown", "test/sh:1", "example.com/nope:1.0")
	k, client := processKubelet(t, pod)
	got := syncUntil(t, k, client, "unknown", 5*time.Second, "reported", func(p *corev1.Pod) bool { return len(p.Status.ContainerStatuses) == 2 })
	if got.Status.Phase != corev1.PodPending || len(k.runtime.workers) != 0 {
		t.Fatalf("phase %s, %d workers", got.Status.Phase, len(k.runtime.workers))
	}
	w := got.Status.ContainerStatuses[1].State.Waiting
	if w == nil || w.Reason != imageNotRunnable || !strings.Contains(w.Message, `"example.com/nope:1.0"`) {
		t.Errorf("the unknown image's container %+v", got.Status.ContainerStatuses[1])
	}
	if w := got.Status.ContainerStatuses[0].State.Waiting; w == nil || w.Reason != "ContainerCreating" {
		t.Errorf("the known image's container %+v", got.Status.ContainerStatuses[0])
	}
}

func TestAPodAskingForWhatTheStandInDoesNotDoIsRefusedNamingTheField(t *testing.T) {
	pod := shPod("hostpath", "sleep 30")
	pod.Spec.Volumes = []corev1.Volume{{Name: "root", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/"}}}}
	k, client := processKubelet(t, pod)
	got := syncUntil(t, k, client, "hostpath", 5*time.Second, "reported", func(p *corev1.Pod) bool { return len(p.Status.ContainerStatuses) == 1 })
	w := mainStatus(got).State.Waiting
	if got.Status.Phase != corev1.PodPending || w == nil || w.Reason != fieldNotSupported || !strings.Contains(w.Message, "spec.volumes[0] (root)") {
		t.Errorf("status %+v", got.Status)
	}
	if len(k.runtime.workers) != 0 {
		t.Errorf("a refused Pod runs")
	}
}

func TestInitContainersRunInOrderBeforeTheContainersAndSidecarsKeepRunning(t *testing.T) {
	dir := t.TempDir()
	order := filepath.Join(dir, "order")
	pod := shPod("inits", "echo main >> "+order+"; sleep 30")
	pod.Spec.InitContainers = []corev1.Container{
		{Name: "first", Image: "test/sh:1", Command: []string{"sh", "-c", "sleep 0.3; echo first >> " + order}},
		{Name: "side", Image: "test/sh:1", Command: []string{"sh", "-c", "echo side >> " + order + "; sleep 30"}, RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways)},
		// The sidecar is started before the next init container, which waits for its line: the
		// order of the two processes' writes is the scheduler's, not the kubelet's.
		{Name: "second", Image: "test/sh:1", Command: []string{"sh", "-c", "until grep -qx side " + order + "; do sleep 0.05; done; echo second >> " + order}},
	}
	k, client := processKubelet(t, pod)
	got := syncUntil(t, k, client, "inits", 10*time.Second, "Ready", func(p *corev1.Pod) bool {
		return condition(p.Status, corev1.PodReady) == corev1.ConditionTrue
	})
	var data []byte
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if data, _ = os.ReadFile(order); strings.Count(string(data), "\n") >= 4 {
			break
		}
	}
	if string(data) != "first\nside\nsecond\nmain\n" {
		t.Errorf("ran in the order %q", data)
	}
	inits := got.Status.InitContainerStatuses
	if len(inits) != 3 || inits[0].State.Terminated == nil || inits[1].State.Running == nil || inits[2].State.Terminated == nil ||
		condition(got.Status, corev1.PodInitialized) != corev1.ConditionTrue {
		t.Errorf("init container statuses %+v", inits)
	}
}

func TestSimulatedModeReportsEveryPodRunningAndReadyWithoutRunningIt(t *testing.T) {
	ctx := context.Background()
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "worker-1"}}
	pod := testPod("any", "registry.k8s.io/kube-apiserver:v1.35.4")
	client := fake.NewClientset(node, pod)
	k := &kubeletStandIn{client: client, name: "worker-1", address: "127.0.0.1", podCIDR: "10.250.0.0/24", simulated: true}
	k.syncPods(ctx)
	got, _ := client.CoreV1().Pods("default").Get(ctx, "any", metav1.GetOptions{})
	if got.Status.Phase != corev1.PodRunning || condition(got.Status, corev1.PodReady) != corev1.ConditionTrue || got.Status.PodIP != "10.250.0.2" {
		t.Errorf("status %+v", got.Status)
	}
}

// copyWithLibraries copies program into root at the same path, with the shared libraries ldd
// lists for it: the smallest root file system that runs it.
func copyWithLibraries(t *testing.T, root, program string) {
	t.Helper()
	out, err := exec.Command("ldd", program).Output()
	if err != nil {
		t.Skipf("ldd %s: %v", program, err)
	}
	files := []string{program}
	for _, line := range strings.Split(string(out), "\n") {
		for _, f := range strings.Fields(line) {
			if strings.HasPrefix(f, "/") {
				files = append(files, f)
			}
		}
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(root, f)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, data, 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

// addImage puts e in the runner's image table.
func addImage(t *testing.T, k *kubeletStandIn, e imageEntry) {
	t.Helper()
	repo, _, ok := splitImage(e.Image)
	if !ok {
		t.Fatalf("image %q", e.Image)
	}
	k.runtime.images.entries[repo] = e
}

func waitForFile(t *testing.T, path string, lines int) string {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		data, err := os.ReadFile(path)
		if err == nil && strings.Count(string(data), "\n") >= lines {
			return string(data)
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s holds %q (%v), not %d lines", path, data, err, lines)
		}
	}
}

func TestARootfsImageRunsChrootedWithItsEntrypointVolumesAndHostname(t *testing.T) {
	rootfs := filepath.Join(t.TempDir(), "rootfs")
	greeting := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "greeting", Namespace: "default"}, Data: map[string]string{"text": "hello\n"}}
	pod := testPod("rooted", "example.com/tiny:1.0")
	pod.Spec.Containers[0].Args = []string{`echo chrooted > /out; while read l; do echo "$l"; done < /data/text >> /out; echo $HOSTNAME $(cat /proc/sys/kernel/hostname 2>/dev/null) >> /out; sleep 30`}
	pod.Spec.Volumes = []corev1.Volume{{Name: "g", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "greeting"}}}}}
	pod.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "g", MountPath: "/data"}}
	k, client := processKubelet(t, greeting, pod)
	copyWithLibraries(t, rootfs, "/bin/sh")
	addImage(t, k, imageEntry{Image: "example.com/tiny", Rootfs: rootfs, Entrypoint: []string{"/bin/sh", "-c"}})

	syncUntil(t, k, client, "rooted", 10*time.Second, "running", running)
	got := waitForFile(t, filepath.Join(rootfs, "out"), 3)
	if got != "chrooted\nhello\nrooted\n" {
		t.Errorf("the container wrote %q", got)
	}
	if _, err := os.Stat("/out"); err == nil {
		t.Error("the container wrote /out on the machine's file system")
	}
}

func TestAClaimsDirectoryOutlivesThePodsThatMountIt(t *testing.T) {
	dir := t.TempDir()
	mnt := filepath.Join(dir, "mnt")
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "pv-1"},
		Spec:       corev1.PersistentVolumeSpec{PersistentVolumeSource: corev1.PersistentVolumeSource{Local: &corev1.LocalVolumeSource{Path: filepath.Join(dir, "volumes", "pv-1")}}},
	}
	claim := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "data", Namespace: "default"}, Spec: corev1.PersistentVolumeClaimSpec{VolumeName: "pv-1"}}
	writer := func(name string) *corev1.Pod {
		pod := shPod(name, "echo "+name+" >> "+mnt+"/log; sleep 30")
		pod.Spec.Volumes = []corev1.Volume{{Name: "d", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}}}
		pod.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "d", MountPath: mnt}}
		return pod
	}
	k, client := processKubelet(t, pv, claim, writer("first"))
	ctx := context.Background()
	got := syncUntil(t, k, client, "first", 10*time.Second, "running", running)
	waitForFile(t, filepath.Join(pv.Spec.Local.Path, "log"), 1)
	got.DeletionTimestamp = ptr.To(metav1.Now())
	got.DeletionGracePeriodSeconds = ptr.To(int64(1))
	if _, err := client.CoreV1().Pods("default").Update(ctx, got, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	syncUntil(t, k, client, "first", 10*time.Second, "deleted", func(p *corev1.Pod) bool { return p == nil })

	if _, err := client.CoreV1().Pods("default").Create(ctx, writer("second"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	syncUntil(t, k, client, "second", 10*time.Second, "running", running)
	if got := waitForFile(t, filepath.Join(pv.Spec.Local.Path, "log"), 2); got != "first\nsecond\n" {
		t.Errorf("the claim's directory holds %q", got)
	}
}

func TestAPodsAddressIsReportedBeforeItsContainersStartAndGivenToThem(t *testing.T) {
	out := filepath.Join(t.TempDir(), "ip")
	pod := shPod("addr", "echo $POD_IP > "+out+".tmp; mv "+out+".tmp "+out+"; sleep 30")
	pod.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "POD_IP", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.podIP"}}}}
	k, client := processKubelet(t, pod)
	got := syncUntil(t, k, client, "addr", 10*time.Second, "running", running)
	if got.Status.PodIP != "10.250.0.2" {
		t.Fatalf("podIP %q", got.Status.PodIP)
	}
	if ip := waitForFile(t, out, 1); strings.TrimSpace(ip) != "10.250.0.2" {
		t.Errorf("the container's POD_IP is %q", ip)
	}
	for _, a := range client.Actions() {
		if u, ok := a.(k8stesting.UpdateAction); ok && a.GetSubresource() == "status" {
			first := u.GetObject().(*corev1.Pod)
			if first.Status.PodIP != "10.250.0.2" || mainStatus(first).State.Waiting == nil {
				t.Errorf("the first status written: podIP %q, container %+v", first.Status.PodIP, mainStatus(first).State)
			}
			break
		}
	}
}

func TestAStartupProbeHoldsBackReadinessUntilItPasses(t *testing.T) {
	started := filepath.Join(t.TempDir(), "started")
	pod := shPod("slow", "sleep 30")
	pod.Spec.Containers[0].StartupProbe = &corev1.Probe{
		ProbeHandler:  corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"test", "-f", started}}},
		PeriodSeconds: 1, FailureThreshold: 30,
	}
	k, client := processKubelet(t, pod)
	syncUntil(t, k, client, "slow", 10*time.Second, "running", running)
	time.Sleep(1500 * time.Millisecond)
	got := syncUntil(t, k, client, "slow", time.Second, "running", running)
	if st := mainStatus(got); *st.Started || st.Ready || condition(got.Status, corev1.PodReady) == corev1.ConditionTrue {
		t.Fatalf("started or ready before its startup probe passed: %+v", st)
	}
	if err := os.WriteFile(started, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	got = syncUntil(t, k, client, "slow", 5*time.Second, "Ready", func(p *corev1.Pod) bool {
		return condition(p.Status, corev1.PodReady) == corev1.ConditionTrue
	})
	if st := mainStatus(got); !*st.Started || st.RestartCount != 0 {
		t.Errorf("status %+v", st)
	}
}
