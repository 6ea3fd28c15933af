package main

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"
)

func TestThePauseImageIsKnownByTheLastElementOfItsRepository(t *testing.T) {
	for image, want := range map[string]bool{
		"registry.k8s.io/pause:3.10": true,
		"pause":                      true,
		"pause:3.9":                  true,
		"localhost:5000/pause":       true,
		"example.com/x/pause@sha256:0123456789abcdef": true,
		"registry.k8s.io/pause:3.10@sha256:0123":      true,
		"nginx":                                       false,
		"localhost:5000/nginx:1.27":                   false,
		"example.com/pause/nginx":                     false,
		"registry.k8s.io/pause-amd64x:3.1":            false,
		"pauser":                                      false,
		"":                                            false,
	} {
		if got := isPauseImage(image); got != want {
			t.Errorf("isPauseImage(%q) = %v, want %v", image, got, want)
		}
	}
}

func testPod(name string, images ...string) *corev1.Pod {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("uid-" + name)},
		Spec:       corev1.PodSpec{NodeName: "worker-1"},
		Status:     corev1.PodStatus{Phase: corev1.PodPending, QOSClass: corev1.PodQOSBestEffort},
	}
	for i, image := range images {
		pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{Name: string(rune('a' + i)), Image: image})
	}
	return pod
}

func condition(s corev1.PodStatus, t corev1.PodConditionType) corev1.ConditionStatus {
	for _, c := range s.Conditions {
		if c.Type == t {
			return c.Status
		}
	}
	return ""
}

func TestAPausePodIsReportedRunningAndReadyAsTheKubeletWould(t *testing.T) {
	pod := testPod("p", "registry.k8s.io/pause:3.10")
	pod.Spec.InitContainers = []corev1.Container{{Name: "init", Image: "pause"}}
	now := metav1.Now()
	s := runningStatus(pod, "127.1.0.4", "10.244.1.2", now)
	if s.Phase != corev1.PodRunning || s.HostIP != "127.1.0.4" || s.PodIP != "10.244.1.2" ||
		len(s.PodIPs) != 1 || len(s.HostIPs) != 1 || s.StartTime == nil || s.QOSClass != corev1.PodQOSBestEffort {
		t.Fatalf("status %+v", s)
	}
	for _, c := range []corev1.PodConditionType{corev1.PodScheduled, corev1.PodReadyToStartContainers, corev1.PodInitialized, corev1.ContainersReady, corev1.PodReady} {
		if got := condition(s, c); got != corev1.ConditionTrue {
			t.Errorf("condition %s is %q", c, got)
		}
	}
	if len(s.ContainerStatuses) != 1 {
		t.Fatalf("container statuses %+v", s.ContainerStatuses)
	}
	c := s.ContainerStatuses[0]
	if c.Name != "a" || c.Image != "registry.k8s.io/pause:3.10" || !c.Ready || !*c.Started || c.State.Running == nil ||
		c.RestartCount != 0 || c.ContainerID != "capw-node://uid-p/a" {
		t.Errorf("container status %+v", c)
	}
	if len(s.InitContainerStatuses) != 1 || s.InitContainerStatuses[0].State.Terminated == nil ||
		s.InitContainerStatuses[0].State.Terminated.Reason != "Completed" || s.InitContainerStatuses[0].State.Terminated.ExitCode != 0 {
		t.Errorf("init container statuses %+v", s.InitContainerStatuses)
	}

	// Once reported, the same Pod gives the same status: nothing is written again.
	pod.Status = s
	later := metav1.NewTime(now.Add(time.Minute))
	if again := runningStatus(pod, "127.1.0.4", "", later); !apiequality.Semantic.DeepEqual(again, s) {
		t.Errorf("a second sync changes the status:\n%+v\n%+v", s, again)
	}

	hostNetwork := testPod("h", "pause")
	hostNetwork.Spec.HostNetwork = true
	if s := runningStatus(hostNetwork, "127.1.0.4", "127.1.0.4", now); s.PodIP != "127.1.0.4" {
		t.Errorf("a host-network Pod has podIP %q", s.PodIP)
	}
}

func TestAPodWithAnotherImageStaysPendingWithImageNotRunnable(t *testing.T) {
	pod := testPod("n", "pause", "nginx")
	if runnable(pod) {
		t.Fatal("a Pod with nginx is runnable")
	}
	now := metav1.Now()
	s := notRunnableStatus(pod, "127.1.0.4", now)
	if s.Phase != corev1.PodPending || s.PodIP != "" || s.HostIP != "127.1.0.4" {
		t.Fatalf("status %+v", s)
	}
	if condition(s, corev1.PodReady) != corev1.ConditionFalse || condition(s, corev1.ContainersReady) != corev1.ConditionFalse {
		t.Errorf("conditions %+v", s.Conditions)
	}
	nginx := s.ContainerStatuses[1]
	if nginx.State.Waiting == nil || nginx.State.Waiting.Reason != imageNotRunnable || nginx.State.Waiting.Message != imageNotRunnableMessage || nginx.Ready {
		t.Errorf("nginx's status %+v", nginx)
	}
	if w := s.ContainerStatuses[0].State.Waiting; w == nil || w.Reason != "ContainerCreating" {
		t.Errorf("pause's status %+v", s.ContainerStatuses[0])
	}
	pod.Status = s
	if again := notRunnableStatus(pod, "127.1.0.4", metav1.NewTime(now.Add(time.Minute))); !apiequality.Semantic.DeepEqual(again, s) {
		t.Errorf("a second sync changes the status:\n%+v\n%+v", s, again)
	}
}

func TestADeletedPausePodEndsSucceededWithItsContainersTerminated(t *testing.T) {
	pod := testPod("p", "pause")
	started := metav1.NewTime(time.Now().Add(-time.Hour).Truncate(time.Second))
	pod.Status = runningStatus(pod, "127.1.0.4", "10.244.1.2", started)
	s := terminatedStatus(pod, "127.1.0.4", metav1.Now())
	if s.Phase != corev1.PodSucceeded || condition(s, corev1.PodReady) != corev1.ConditionFalse {
		t.Fatalf("status %+v", s)
	}
	term := s.ContainerStatuses[0].State.Terminated
	if term == nil || term.ExitCode != 0 || term.Reason != "Completed" || !term.StartedAt.Equal(&started) {
		t.Errorf("container status %+v", s.ContainerStatuses[0])
	}
}

func TestPodAddressesAreTheLowestFreeOfTheNodesPodCIDR(t *testing.T) {
	for _, c := range []struct {
		cidr string
		used []string
		want string
	}{
		{"10.244.1.0/24", nil, "10.244.1.2"},
		{"10.244.1.0/24", []string{"10.244.1.2", "10.244.1.4"}, "10.244.1.3"},
		{"10.244.1.0/30", []string{"10.244.1.2"}, ""},
		{"", nil, ""},
	} {
		used := map[string]bool{}
		for _, u := range c.used {
			used[u] = true
		}
		if got := freePodIP(c.cidr, used); got != c.want {
			t.Errorf("freePodIP(%q, %v) = %q, want %q", c.cidr, c.used, got, c.want)
		}
	}
}

func TestThePodRunnerWritesEachStatusOnceAndDeletesADeletedPodAfterNoticingIt(t *testing.T) {
	ctx := context.Background()
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "worker-1"}, Spec: corev1.NodeSpec{PodCIDR: "10.244.1.0/24"}}
	pause, nginx := testPod("p", "pause"), testPod("n", "nginx")
	client := fake.NewClientset(node, pause, nginx)
	k := &kubeletStandIn{client: client, name: "worker-1", address: "127.1.0.4"}

	k.syncPods(ctx)
	got, _ := client.CoreV1().Pods("default").Get(ctx, "p", metav1.GetOptions{})
	if got.Status.Phase != corev1.PodRunning || got.Status.PodIP != "10.244.1.2" {
		t.Fatalf("the pause Pod's status %+v", got.Status)
	}
	got, _ = client.CoreV1().Pods("default").Get(ctx, "n", metav1.GetOptions{})
	if got.Status.Phase != corev1.PodPending || got.Status.ContainerStatuses[0].State.Waiting.Reason != imageNotRunnable {
		t.Fatalf("the nginx Pod's status %+v", got.Status)
	}

	writes := func() int {
		n := 0
		for _, a := range client.Actions() {
			if a.GetVerb() == "update" || a.GetVerb() == "delete" {
				n++
			}
		}
		return n
	}
	before := writes()
	k.syncPods(ctx)
	if after := writes(); after != before {
		t.Fatalf("a second sync wrote %d times", after-before)
	}

	// A deletion as the API server records one with a grace period: only the timestamp is set.
	for _, name := range []string{"p", "n"} {
		p, _ := client.CoreV1().Pods("default").Get(ctx, name, metav1.GetOptions{})
		p.DeletionTimestamp = ptr.To(metav1.Now())
		p.DeletionGracePeriodSeconds = ptr.To(int64(30))
		if _, err := client.CoreV1().Pods("default").Update(ctx, p, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	k.syncPods(ctx)
	got, err := client.CoreV1().Pods("default").Get(ctx, "p", metav1.GetOptions{})
	if err != nil || got.Status.Phase != corev1.PodSucceeded {
		t.Fatalf("the deleted pause Pod right after it was noticed: %v %+v", err, got.Status)
	}
	k.syncPods(ctx)
	if _, err := client.CoreV1().Pods("default").Get(ctx, "p", metav1.GetOptions{}); err != nil {
		t.Fatalf("the pause Pod was deleted within %s of being noticed: %v", podDeleteDelay, err)
	}
	for uid := range k.terminating {
		k.terminating[uid] = time.Now().Add(-podDeleteDelay)
	}
	k.syncPods(ctx)
	for _, name := range []string{"p", "n"} {
		if _, err := client.CoreV1().Pods("default").Get(ctx, name, metav1.GetOptions{}); err == nil {
			t.Errorf("Pod %s was not deleted", name)
		}
	}
	if len(k.terminating) != 2 {
		t.Errorf("terminating %v", k.terminating)
	}
	k.syncPods(ctx)
	if len(k.terminating) != 0 {
		t.Errorf("deleted Pods are still remembered: %v", k.terminating)
	}
}
