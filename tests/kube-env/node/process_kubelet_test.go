package main

import (
	"context"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apitypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"
)

// The pure parts of the process kubelet: expansion, the image table, back-off, hosts file,
// probe thresholds, status transitions, refusals, provisioning and the command line.

func TestArgsAndEnvAreExpandedByKubernetesRules(t *testing.T) {
	ctx := context.Background()
	pod := testPod("p", "test/sh")
	pod.Spec.NodeName = "worker-1"
	pod.Spec.ServiceAccountName = "robot"
	client := fake.NewClientset(
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: "default"}, Data: map[string][]byte{"password": []byte("pw"), "user": []byte("u")}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm", Namespace: "default"}, Data: map[string]string{"mode": "fast"}},
	)
	c := corev1.Container{
		EnvFrom: []corev1.EnvFromSource{{Prefix: "S_", SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "s"}}}},
		Env: []corev1.EnvVar{
			{Name: "POD_IP", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.podIP"}}},
			{Name: "NODE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "spec.nodeName"}}},
			{Name: "SA", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "spec.serviceAccountName"}}},
			{Name: "URL", Value: "https://$(POD_IP):6443/$(MISSING)/$$(POD_IP)/$(S_user)"},
			{Name: "LATER", Value: "$(AFTER)"},
			{Name: "AFTER", Value: "x"},
			{Name: "MODE", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "cm"}, Key: "mode"}}},
			{Name: "OPTIONAL", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "nope"}, Key: "k", Optional: ptr.To(true)}}},
		},
	}
	src := newEnvSource(client, pod, "10.250.0.7", "127.0.0.1", "127.0.0.1:6443")
	env, err := src.containerEnv(ctx, c, []string{defaultPath})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, v := range env {
		got[v.name] = v.value
	}
	for name, want := range map[string]string{
		"S_password": "pw", "S_user": "u", "POD_IP": "10.250.0.7", "NODE": "worker-1", "SA": "robot",
		"URL":   "https://10.250.0.7:6443/$(MISSING)/$(POD_IP)/u",
		"LATER": "$(AFTER)", // only variables defined before are expanded
		"MODE":  "fast", "KUBERNETES_SERVICE_HOST": "127.0.0.1", "KUBERNETES_SERVICE_PORT": "6443",
	} {
		if got[name] != want {
			t.Errorf("%s = %q, want %q", name, got[name], want)
		}
	}
	if _, ok := got["OPTIONAL"]; ok {
		t.Error("an optional missing key made a variable")
	}
	args := expandArgs([]string{"--advertise=$(POD_IP)", "$$(POD_IP)", "$(NOPE)", "$(MODE)$(MODE)", "$"}, env)
	if want := []string{"--advertise=10.250.0.7", "$(POD_IP)", "$(NOPE)", "fastfast", "$"}; !reflect.DeepEqual(args, want) {
		t.Errorf("args %q, want %q", args, want)
	}

	c.Env = append(c.Env, corev1.EnvVar{Name: "X", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "s"}, Key: "missing"}}})
	_, err = newEnvSource(client, pod, "", "", "").containerEnv(ctx, c, nil)
	var cfg *configError
	if err == nil || !asConfigError(err, &cfg) || !strings.Contains(err.Error(), "missing") {
		t.Errorf("a missing required key: %v", err)
	}
}

func asConfigError(err error, target **configError) bool {
	for err != nil {
		if c, ok := err.(*configError); ok {
			*target = c
			return true
		}
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return false
		}
		err = u.Unwrap()
	}
	return false
}

func TestTheImageTableMapsRepositoriesToProgramsWithTheirTag(t *testing.T) {
	table, err := parseImageTable([]byte(`[
		{"image": "registry.k8s.io/kube-apiserver", "binary": "/cache/{tag}/bin/kube-apiserver"},
		{"image": "nginx", "rootfs": "/images/nginx-{tag}", "entrypoint": ["/docker-entrypoint.sh"], "cmd": ["nginx", "-g", "daemon off;"]},
		{"image": "example.com/pause", "pause": true}
	]`))
	if err != nil {
		t.Fatal(err)
	}
	r := table.resolve("registry.k8s.io/kube-apiserver:v1.35.4")
	if r.kind != imageBinary || r.entry.Binary != "/cache/v1.35.4/bin/kube-apiserver" {
		t.Errorf("kube-apiserver resolves to %+v", r)
	}
	if r := table.resolve("docker.io/library/nginx"); r.kind != imageRootfs || r.entry.Rootfs != "/images/nginx-latest" {
		t.Errorf("nginx resolves to %+v", r)
	}
	if table.resolve("example.com/pause:1").kind != imagePause || table.resolve("registry.k8s.io/pause:3.10").kind != imagePause {
		t.Error("pause images")
	}
	for _, image := range []string{"registry.k8s.io/kube-scheduler:v1.35.4", "quay.io/nginx", ""} {
		if table.resolve(image).kind != imageUnknown {
			t.Errorf("%q is known", image)
		}
	}
	if (imageTable{}).resolve("registry.k8s.io/pause:3.10").kind != imagePause || !(imageTable{}).empty() {
		t.Error("the empty table does not know pause")
	}
	for _, bad := range []string{`[{"image": "x"}]`, `[{"image": "x:1", "pause": true}]`, `[{"image": "x", "binary": "/a", "pause": true}]`,
		`[{"image": "x", "pause": true}, {"image": "docker.io/library/x", "pause": true}]`, `{}`} {
		if _, err := parseImageTable([]byte(bad)); err == nil {
			t.Errorf("table %s accepted", bad)
		}
	}

	// command replaces the entrypoint: for a binary its first word must name the program.
	argv, err := r.argv(corev1.Container{Command: []string{"kube-apiserver", "--a"}, Args: []string{"--b"}})
	if err != nil || !reflect.DeepEqual(argv, []string{"/cache/v1.35.4/bin/kube-apiserver", "--a", "--b"}) {
		t.Errorf("argv %q %v", argv, err)
	}
	if argv, _ := r.argv(corev1.Container{Args: []string{"--b"}}); !reflect.DeepEqual(argv, []string{"/cache/v1.35.4/bin/kube-apiserver", "--b"}) {
		t.Errorf("args only: %q", argv)
	}
	if _, err := r.argv(corev1.Container{Command: []string{"etcd"}}); err == nil {
		t.Error("a command naming another program runs")
	}
	nginx := table.resolve("nginx:1.27")
	for _, c := range []struct {
		container corev1.Container
		want      []string
	}{
		{corev1.Container{}, []string{"/docker-entrypoint.sh", "nginx", "-g", "daemon off;"}},
		{corev1.Container{Args: []string{"nginx-debug"}}, []string{"/docker-entrypoint.sh", "nginx-debug"}},
		{corev1.Container{Command: []string{"sh"}}, []string{"sh"}},
		{corev1.Container{Command: []string{"sh"}, Args: []string{"-c", "x"}}, []string{"sh", "-c", "x"}},
	} {
		if argv, err := nginx.argv(c.container); err != nil || !reflect.DeepEqual(argv, c.want) {
			t.Errorf("rootfs argv of %+v: %q %v, want %q", c.container, argv, err, c.want)
		}
	}
}

func TestTheCrashBackOffDoublesFromItsBaseUpToThirtyTimesIt(t *testing.T) {
	b := newCrashBackoff(10 * time.Second)
	now := time.Now()
	var waits []time.Duration
	for i := 0; i < 8; i++ {
		waits = append(waits, b.next(now))
		now = now.Add(time.Second)
	}
	want := []time.Duration{0, 10 * time.Second, 20 * time.Second, 40 * time.Second, 80 * time.Second, 160 * time.Second, 300 * time.Second, 300 * time.Second}
	if !reflect.DeepEqual(waits, want) {
		t.Errorf("waits %v, want %v", waits, want)
	}
	// Ten quiet minutes later it starts over.
	if w := b.next(now.Add(11 * time.Minute)); w != 0 {
		t.Errorf("after a long run the wait is %s", w)
	}
}

func TestTheHostsFileNamesThePodAndWhatExtraHostsAdds(t *testing.T) {
	pod := testPod("etcd-0", "etcd")
	pod.Spec.Hostname, pod.Spec.Subdomain = "etcd-0", "etcd"
	pod.Spec.HostAliases = []corev1.HostAlias{{IP: "10.0.0.9", Hostnames: []string{"a", "b"}}}
	old := extraHosts
	t.Cleanup(func() { extraHosts = old })
	extraHosts = func(p *corev1.Pod) []string { return []string{"10.96.0.10 kube-dns.kube-system.svc"} }
	got := string(hostsFile(pod, "10.250.0.5"))
	for _, line := range []string{"127.0.0.1\tlocalhost\n", "10.250.0.5\tetcd-0.etcd.default.svc.cluster.local\tetcd-0\n", "10.0.0.9\ta\tb\n", "10.96.0.10 kube-dns.kube-system.svc\n"} {
		if !strings.Contains(got, line) {
			t.Errorf("hosts file lacks %q:\n%s", line, got)
		}
	}
	path := t.TempDir() + "/etc-hosts"
	if err := writeHostsFile(path, []byte("a\n")); err != nil {
		t.Fatal(err)
	}
	before, _ := os.Stat(path)
	time.Sleep(10 * time.Millisecond)
	if err := writeHostsFile(path, []byte("a\n")); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.Stat(path); !after.ModTime().Equal(before.ModTime()) {
		t.Error("an unchanged hosts file was written again")
	}
}

func TestAProbeResultFlipsOnlyAfterItsThresholdsInARow(t *testing.T) {
	c := newProbeCounter(&corev1.Probe{SuccessThreshold: 2, FailureThreshold: 3})
	steps := []struct {
		ok              bool
		result, decided bool
	}{
		{false, false, false}, {false, false, false}, {true, true, false}, {false, false, false},
		{false, false, false}, {false, false, true}, {true, true, false}, {true, true, true},
	}
	for i, s := range steps {
		if r, d := c.observe(s.ok); r != s.result || d != s.decided {
			t.Errorf("step %d (%v): %v %v, want %v %v", i, s.ok, r, d, s.result, s.decided)
		}
	}
	if d := newProbeCounter(&corev1.Probe{}); d.successThreshold != 1 || d.failureThreshold != 3 {
		t.Errorf("defaults %+v", d)
	}
}

func TestAProcessPodsStatusFollowsItsContainers(t *testing.T) {
	pod := testPod("p", "test/sh", "test/sh")
	now := metav1.Now()
	runningC := func(name string, ready bool) containerSnapshot {
		return containerSnapshot{name: name, image: "test/sh", state: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}}, started: true, ready: ready}
	}
	s := processPodStatus(pod, podSnapshot{initialized: true, mains: []containerSnapshot{runningC("a", true), runningC("b", false)}}, "127.0.0.1", "10.250.0.2", now)
	if s.Phase != corev1.PodRunning || condition(s, corev1.PodReady) != corev1.ConditionFalse || s.PodIP != "10.250.0.2" {
		t.Errorf("one container unready: %+v", s)
	}
	pod.Status = s
	s = processPodStatus(pod, podSnapshot{initialized: true, mains: []containerSnapshot{runningC("a", true), runningC("b", true)}}, "127.0.0.1", "", now)
	if condition(s, corev1.PodReady) != corev1.ConditionTrue || condition(s, corev1.ContainersReady) != corev1.ConditionTrue {
		t.Errorf("all ready: %+v", s.Conditions)
	}
	pod.Spec.ReadinessGates = []corev1.PodReadinessGate{{ConditionType: "example.com/gate"}}
	if s := processPodStatus(pod, podSnapshot{initialized: true, mains: []containerSnapshot{runningC("a", true), runningC("b", true)}}, "127.0.0.1", "", now); condition(s, corev1.PodReady) != corev1.ConditionFalse {
		t.Error("Ready with a readiness gate not True")
	}
	done := func(name string, code int32) containerSnapshot {
		return containerSnapshot{name: name, state: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code}}, done: true}
	}
	if s := processPodStatus(pod, podSnapshot{initialized: true, terminal: true, mains: []containerSnapshot{done("a", 0), done("b", 0)}}, "127.0.0.1", "", now); s.Phase != corev1.PodSucceeded {
		t.Errorf("all exited 0: %s", s.Phase)
	}
	if s := processPodStatus(pod, podSnapshot{initialized: true, terminal: true, mains: []containerSnapshot{done("a", 0), done("b", 137)}}, "127.0.0.1", "", now); s.Phase != corev1.PodFailed {
		t.Errorf("one killed: %s", s.Phase)
	}
	waiting := &corev1.ContainerStateWaiting{Reason: "CreateContainerConfigError", Message: `secret "s" not found`}
	s = processPodStatus(testPod("q", "test/sh"), podSnapshot{setupWaiting: waiting, mains: []containerSnapshot{{name: "a", state: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}}}}, "127.0.0.1", "", now)
	if s.Phase != corev1.PodPending || s.ContainerStatuses[0].State.Waiting.Reason != "CreateContainerConfigError" {
		t.Errorf("a Pod waiting for its secret: %+v", s)
	}
}

func TestRefusedFieldsAreNamedAndIgnoredOnesAreNot(t *testing.T) {
	pod := testPod("p", "test/sh")
	pod.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 80, HostPort: 8080}}
	pod.Spec.Containers[0].Lifecycle = &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{"x"}}}}
	pod.Spec.Containers[0].LivenessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{GRPC: &corev1.GRPCAction{Port: 1}}}
	pod.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "CPU", ValueFrom: &corev1.EnvVarSource{ResourceFieldRef: &corev1.ResourceFieldSelector{Resource: "limits.cpu"}}}}
	pod.Spec.Containers[0].Resources.Limits = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}
	pod.Spec.Volumes = []corev1.Volume{
		{Name: "h", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/"}}},
		{Name: "d", VolumeSource: corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{Items: []corev1.DownwardAPIVolumeFile{
			{Path: "name", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}},
			{Path: "cpu", ResourceFieldRef: &corev1.ResourceFieldSelector{Resource: "limits.cpu"}},
		}}}},
	}
	got := strings.Join(refusals(pod), "\n")
	for _, field := range []string{"spec.volumes[0] (h)", "spec.volumes[1] (d).downwardAPI.items[1].resourceFieldRef", "spec.containers[0] (a).ports[0].hostPort", "spec.containers[0] (a).lifecycle",
		"spec.containers[0] (a).livenessProbe.grpc", "spec.containers[0] (a).env[0] (CPU).valueFrom"} {
		if !strings.Contains(got, field+": ") {
			t.Errorf("%s is not refused:\n%s", field, got)
		}
	}
	if strings.Contains(got, "resources") {
		t.Errorf("resources are refused:\n%s", got)
	}
	pod = testPod("q", "test/sh")
	pod.Spec.HostNetwork = true
	pod.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 80, HostPort: 80}}
	if r := refusals(pod); len(r) != 0 {
		t.Errorf("a host-network Pod's hostPort is refused: %v", r)
	}
}

func TestClaimsOfCapwLocalGetAVolumeDirectoryThatGoesWithTheClaim(t *testing.T) {
	ctx := context.Background()
	class := &storagev1.StorageClass{
		ObjectMeta:        metav1.ObjectMeta{Name: localStorageClass, Annotations: map[string]string{defaultClassAnnotation: "true"}},
		Provisioner:       localProvisioner,
		VolumeBindingMode: ptr.To(storagev1.VolumeBindingWaitForFirstConsumer),
	}
	claim := func(name string, class *string, annotations map[string]string) *corev1.PersistentVolumeClaim {
		return &corev1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: apitypes.UID("uid-claim-" + name), Annotations: annotations},
			Spec: corev1.PersistentVolumeClaimSpec{
				StorageClassName: class, AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("2Gi")}},
			},
		}
	}
	picked := map[string]string{selectedNodeAnnotation: "worker-1"}
	client := fake.NewClientset(class,
		claim("data", ptr.To(localStorageClass), picked),
		claim("default-class", nil, picked),
		claim("not-yet", ptr.To(localStorageClass), nil),
		claim("elsewhere", ptr.To(localStorageClass), map[string]string{selectedNodeAnnotation: "worker-2"}),
		claim("other", ptr.To("fast"), picked),
	)
	dir := t.TempDir()
	p := &localVolumes{client: client, node: "worker-1", dir: dir}
	p.sync(ctx)

	pv, err := client.CoreV1().PersistentVolumes().Get(ctx, "pvc-uid-claim-data", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if pv.Spec.Local == nil || pv.Spec.Local.Path != dir+"/pvc-uid-claim-data" || pv.Spec.ClaimRef.Name != "data" ||
		pv.Spec.PersistentVolumeReclaimPolicy != corev1.PersistentVolumeReclaimDelete || pv.Status.Phase != corev1.VolumeBound ||
		pv.Spec.NodeAffinity.Required.NodeSelectorTerms[0].MatchExpressions[0].Values[0] != "worker-1" ||
		pv.Spec.Capacity.Storage().String() != "2Gi" {
		t.Errorf("PV %+v", pv)
	}
	if _, err := os.Stat(pv.Spec.Local.Path); err != nil {
		t.Error(err)
	}
	bound, _ := client.CoreV1().PersistentVolumeClaims("default").Get(ctx, "data", metav1.GetOptions{})
	if bound.Spec.VolumeName != pv.Name || bound.Status.Phase != corev1.ClaimBound {
		t.Errorf("claim %+v", bound)
	}
	pvs, _ := client.CoreV1().PersistentVolumes().List(ctx, metav1.ListOptions{})
	if len(pvs.Items) != 2 { // data and default-class only
		t.Errorf("%d PVs", len(pvs.Items))
	}

	if err := client.CoreV1().PersistentVolumeClaims("default").Delete(ctx, "data", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	p.sync(ctx)
	if _, err := client.CoreV1().PersistentVolumes().Get(ctx, pv.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the PV of a deleted claim: %v", err)
	}
	if _, err := os.Stat(pv.Spec.Local.Path); !os.IsNotExist(err) {
		t.Errorf("the directory of a deleted claim: %v", err)
	}
}

func TestAnEmptyDirIsWritableByEveryUserAsTheKubeletMakesIt(t *testing.T) {
	pod := &corev1.Pod{Spec: corev1.PodSpec{Volumes: []corev1.Volume{
		{Name: "cache", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
	}}}
	m := &volumeMaker{client: fake.NewClientset(), pod: pod, podDir: t.TempDir(), now: time.Now}
	set, err := m.make(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(set.dirs["cache"])
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o777 {
		t.Errorf("emptyDir mode %v, want rwxrwxrwx", info.Mode().Perm())
	}
}

func TestTheKubeletCommandLineNeedsItsFlags(t *testing.T) {
	good := []string{"--kubeconfig", "k", "--name", "n", "--root", "r", "--images", "i", "--pod-cidr", "10.250.0.0/16"}
	cfg, err := parseProcessKubeletFlags(good)
	if err != nil || cfg.Address != "127.0.0.1" || cfg.CrashBackoff != defaultBackoffBase || cfg.Simulated {
		t.Fatalf("%+v %v", cfg, err)
	}
	if _, err := parseProcessKubeletFlags([]string{"--kubeconfig", "k", "--name", "n", "--root", "r", "--pod-cidr", "10.0.0.0/8", "--simulated"}); err != nil {
		t.Errorf("simulated without images: %v", err)
	}
	for i := 0; i < len(good); i += 2 {
		without := append(append([]string{}, good[:i]...), good[i+2:]...)
		if _, err := parseProcessKubeletFlags(without); err == nil {
			t.Errorf("accepted without %s", good[i])
		}
	}
	if got := apiServerHostPort("https://127.0.0.1:6443"); got != "127.0.0.1:6443" {
		t.Errorf("api server %q", got)
	}
}

func TestTokensAreRequestedAgainAtEightyPercentOfTheirLifetime(t *testing.T) {
	issued := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if got := tokenRefreshTime(issued, issued.Add(time.Hour)); !got.Equal(issued.Add(48 * time.Minute)) {
		t.Errorf("refresh at %s", got)
	}
}
