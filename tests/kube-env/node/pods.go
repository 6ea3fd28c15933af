package main

import (
	"context"
	"fmt"
	"log"
	"net/netip"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// The kubelet stand-in's pod runner. With no container runtime it runs a Pod in one of three
// ways, chosen per Pod (podPlan):
//
//   - In its status only, when every container is of the pause image (a container that does
//     nothing until it is stopped), and for every Pod in simulated mode (`capw-node kubelet
//     --simulated`, for the scale benchmark): the Pod is reported Running and Ready, as the
//     kubelet would report it once its containers started, and finished and deleted when it is
//     deleted, as the kubelet does once its containers stopped. That is enough for what the
//     cluster sees of workloads: ReplicaSets get Ready replicas, PodDisruptionBudgets count
//     healthy Pods, and a drain's evictions end with the Pods gone. This is all the workload
//     clusters' machines do (`capw-node boot`).
//   - As local processes, when the process kubelet's image table (images.go) maps every image
//     to a program or a root file system (`capw-node kubelet`, the management cluster's
//     Node): processes.go runs them, with volumes, probes, restarts and logs.
//   - Not at all: a Pod with an image the table does not know stays Pending with the reason
//     ImageNotRunnable, and one asking for what the stand-in refuses (refusals.go) with the
//     reason FieldNotSupported.
//
// Static and mirror Pods do not exist here. The runner uses only what the Node authorizer and
// the NodeRestriction admission plugin allow a kubelet: it lists the Pods bound to its Node,
// updates their status and deletes them (and, for projected volumes, requests service account
// tokens).

// podSyncInterval is how often the runner looks at the Pods bound to its Node.
const podSyncInterval = 2 * time.Second

// podDeleteDelay is the least time between noticing that a Pod is being deleted and deleting
// it, so that watchers see it terminating first. The pause container exits at once on SIGTERM:
// the Pod's grace period is never waited for.
const podDeleteDelay = time.Second

// imageNotRunnable is the waiting reason of a container whose image the stand-in cannot run.
const (
	imageNotRunnable        = "ImageNotRunnable"
	imageNotRunnableMessage = "the kubelet stand-in runs only the pause image"
)

// isPauseImage reports whether image is the pause image: whatever the registry, tag or
// digest, the last element of its repository path is `pause`.
func isPauseImage(image string) bool {
	name, _, _ := strings.Cut(image, "@")
	name = name[strings.LastIndexByte(name, '/')+1:]
	name, _, _ = strings.Cut(name, ":")
	return name == "pause"
}

// runnable reports whether every container and init container of pod is of the pause image.
func runnable(pod *corev1.Pod) bool {
	for _, c := range pod.Spec.InitContainers {
		if !isPauseImage(c.Image) {
			return false
		}
	}
	for _, c := range pod.Spec.Containers {
		if !isPauseImage(c.Image) {
			return false
		}
	}
	return true
}

// sidecar reports whether c is a restartable init container, which runs beside the Pod's
// containers instead of completing before them.
func sidecar(c corev1.Container) bool {
	return c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways
}

func containerID(pod *corev1.Pod, name string) string {
	return fmt.Sprintf("capw-node://%s/%s", pod.UID, name)
}

// syncPods brings the Pods bound to this Node one step towards what the kubelet would make of
// them. Errors are logged; whatever failed is tried again at the next sync.
func (k *kubeletStandIn) syncPods(ctx context.Context) {
	list, err := k.client.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + k.name})
	if err != nil {
		if ctx.Err() == nil {
			log.Printf("node %s: listing its Pods: %v", k.name, err)
		}
		return
	}
	if k.terminating == nil {
		k.terminating = map[types.UID]time.Time{}
	}
	seen := map[types.UID]bool{}
	usedIPs := map[string]bool{}
	for i := range list.Items {
		if p := &list.Items[i]; !p.Spec.HostNetwork && !terminal(p) && p.Status.PodIP != "" {
			usedIPs[p.Status.PodIP] = true
		}
	}
	if k.runtime != nil {
		for _, w := range k.runtime.workers {
			if !w.pod.Spec.HostNetwork && !w.isStopped() {
				usedIPs[w.podIP] = true
			}
		}
	}
	for i := range list.Items {
		pod := &list.Items[i]
		seen[pod.UID] = true
		if err := k.syncPod(ctx, pod, usedIPs); err != nil && ctx.Err() == nil {
			log.Printf("node %s: Pod %s/%s: %v", k.name, pod.Namespace, pod.Name, err)
		}
	}
	for uid := range k.terminating {
		if !seen[uid] {
			delete(k.terminating, uid)
		}
	}
	if k.runtime != nil {
		k.runtime.forgetGone(seen)
	}
}

func terminal(pod *corev1.Pod) bool {
	return pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
}

func (k *kubeletStandIn) syncPod(ctx context.Context, pod *corev1.Pod, usedIPs map[string]bool) error {
	now := metav1.Now()
	if k.runtime != nil {
		if w := k.runtime.workers[pod.UID]; w != nil {
			return k.syncProcessPod(ctx, pod, w, now)
		}
	}
	plan, waiting := k.podPlan(pod)
	if pod.DeletionTimestamp != nil {
		return k.finishPod(ctx, pod, plan == planStatusOnly, now)
	}
	if terminal(pod) {
		return nil
	}
	var status corev1.PodStatus
	switch plan {
	case planStatusOnly:
		podIP := ""
		if pod.Spec.HostNetwork {
			podIP = k.address
		} else if pod.Status.PodIP == "" {
			podIP = k.allocatePodIP(ctx, usedIPs)
		}
		status = runningStatus(pod, k.address, podIP, now)
	case planProcesses:
		return k.startProcessPod(ctx, pod, usedIPs, now)
	default:
		status = refusedStatus(pod, k.address, now, waiting)
	}
	return k.writeStatus(ctx, pod, status)
}

// podPlan is how the runner runs pod; a refused Pod comes with each container's waiting
// state.
type podPlan int

const (
	planRefused podPlan = iota
	planStatusOnly
	planProcesses
)

func (k *kubeletStandIn) podPlan(pod *corev1.Pod) (podPlan, func(corev1.Container) *corev1.ContainerStateWaiting) {
	if k.simulated {
		return planStatusOnly, nil
	}
	var table imageTable
	if k.runtime != nil {
		table = k.runtime.images
	}
	all := append(append([]corev1.Container{}, pod.Spec.InitContainers...), pod.Spec.Containers...)
	unknown, pauseOnly := false, true
	for _, c := range all {
		switch table.resolve(c.Image).kind {
		case imageUnknown:
			unknown = true
		case imagePause:
		default:
			pauseOnly = false
		}
	}
	notYet := func(c corev1.Container) *corev1.ContainerStateWaiting {
		for _, init := range pod.Spec.InitContainers {
			if init.Name == c.Name {
				return &corev1.ContainerStateWaiting{Reason: "PodInitializing"}
			}
		}
		return &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}
	}
	switch {
	case unknown:
		return planRefused, func(c corev1.Container) *corev1.ContainerStateWaiting {
			if table.resolve(c.Image).kind != imageUnknown {
				return notYet(c)
			}
			if table.empty() {
				return &corev1.ContainerStateWaiting{Reason: imageNotRunnable, Message: imageNotRunnableMessage}
			}
			return &corev1.ContainerStateWaiting{Reason: imageNotRunnable, Message: unknownImageMessage(c.Image)}
		}
	case pauseOnly:
		return planStatusOnly, nil
	}
	if refused := refusals(pod); len(refused) > 0 {
		msg := strings.Join(refused, "; ")
		return planRefused, func(corev1.Container) *corev1.ContainerStateWaiting {
			return &corev1.ContainerStateWaiting{Reason: fieldNotSupported, Message: msg}
		}
	}
	return planProcesses, nil
}

// finishPod ends a Pod being deleted as the kubelet does once its containers stopped: the
// pause containers (statusOnly) are reported terminated (they exit 0 on SIGTERM), then the
// Pod is deleted with no grace period left, on the tick after it was noticed. A Pod the
// stand-in could not run had no container to stop and is only deleted.
func (k *kubeletStandIn) finishPod(ctx context.Context, pod *corev1.Pod, statusOnly bool, now metav1.Time) error {
	if statusOnly {
		if err := k.writeStatus(ctx, pod, terminatedStatus(pod, k.address, now)); err != nil {
			return err
		}
	}
	_, err := k.deleteOnceNoticed(ctx, pod, now)
	return err
}

// deleteOnceNoticed deletes a Pod being deleted whose containers have stopped, with no grace
// period left, once podDeleteDelay passed since it was first seen being deleted; it reports
// whether the Pod is gone.
func (k *kubeletStandIn) deleteOnceNoticed(ctx context.Context, pod *corev1.Pod, now metav1.Time) (bool, error) {
	noticed, ok := k.terminating[pod.UID]
	if !ok {
		k.terminating[pod.UID] = now.Time
		return false, nil
	}
	if now.Sub(noticed) < podDeleteDelay {
		return false, nil
	}
	err := k.client.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{
		GracePeriodSeconds: ptr.To(int64(0)),
		Preconditions:      &metav1.Preconditions{UID: &pod.UID},
	})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return false, fmt.Errorf("deleting: %w", err)
	}
	log.Printf("node %s: Pod %s/%s deleted", k.name, pod.Namespace, pod.Name)
	return true, nil
}

// writeStatus updates the Pod's status when it differs from status, so that a Pod already
// reported is not written again at every sync.
func (k *kubeletStandIn) writeStatus(ctx context.Context, pod *corev1.Pod, status corev1.PodStatus) error {
	if apiequality.Semantic.DeepEqual(pod.Status, status) {
		return nil
	}
	updated := pod.DeepCopy()
	updated.Status = status
	if _, err := k.client.CoreV1().Pods(pod.Namespace).UpdateStatus(ctx, updated, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("updating status: %w", err)
	}
	log.Printf("node %s: Pod %s/%s is %s", k.name, pod.Namespace, pod.Name, describeStatus(status))
	return nil
}

// describeStatus is the Pod's phase, with the first reason a container waits for.
func describeStatus(s corev1.PodStatus) string {
	for _, c := range append(append([]corev1.ContainerStatus{}, s.InitContainerStatuses...), s.ContainerStatuses...) {
		if c.State.Waiting != nil && c.State.Waiting.Reason != "" {
			return fmt.Sprintf("%s (%s %s)", s.Phase, c.Name, c.State.Waiting.Reason)
		}
	}
	return string(s.Phase)
}

// allocatePodIP hands out the lowest free address of the Node's spec.podCIDR, as the
// host-local IPAM of a CNI plugin would (the network address and the first, a bridge's
// gateway, are skipped). Nothing answers on it: there is no pod network here; the address is
// only for the Pod's status and the Services' endpoints. A Node without a podCIDR (the cluster
// has no pod subnet) gives its Pods no address at all: their podIP stays empty.
func (k *kubeletStandIn) allocatePodIP(ctx context.Context, used map[string]bool) string {
	if k.podCIDR == "" {
		node, err := k.client.CoreV1().Nodes().Get(ctx, k.name, metav1.GetOptions{})
		if err != nil {
			log.Printf("node %s: reading its podCIDR: %v", k.name, err)
			return ""
		}
		k.podCIDR = node.Spec.PodCIDR
	}
	ip := freePodIP(k.podCIDR, used)
	if ip != "" {
		used[ip] = true
	}
	return ip
}

// freePodIP is the lowest address of cidr from its third on that is not in used, or "" when
// cidr is not a prefix or it is full.
func freePodIP(cidr string, used map[string]bool) string {
	prefix, err := netip.ParsePrefix(cidr)
	if err != nil {
		return ""
	}
	prefix = prefix.Masked()
	addr := prefix.Addr().Next().Next()
	for ; addr.IsValid() && prefix.Contains(addr); addr = addr.Next() {
		if next := addr.Next(); addr.Is4() && !prefix.Contains(next) {
			break // the broadcast address
		}
		if !used[addr.String()] {
			return addr.String()
		}
	}
	return ""
}

// runningStatus is the status the kubelet reports for pod once its pause containers started:
// Running and Ready, init containers completed, sidecars and containers running. hostIP is the
// Node's address; podIP is given only when the Pod has none yet (the Node's address for a
// host-network Pod, else one from the Node's podCIDR, else empty). Times already reported are
// kept, so the same Pod gives the same status at every sync.
func runningStatus(pod *corev1.Pod, hostIP, podIP string, now metav1.Time) corev1.PodStatus {
	s := *pod.Status.DeepCopy()
	s.Phase = corev1.PodRunning
	s.Reason, s.Message = "", ""
	setIPs(&s, hostIP, podIP)
	if s.StartTime == nil {
		s.StartTime = &now
	}
	setPodCondition(&s, corev1.PodScheduled, corev1.ConditionTrue, "", "", now)
	setPodCondition(&s, corev1.PodReadyToStartContainers, corev1.ConditionTrue, "", "", now)
	setPodCondition(&s, corev1.PodInitialized, corev1.ConditionTrue, "", "", now)
	setPodCondition(&s, corev1.ContainersReady, corev1.ConditionTrue, "", "", now)
	setPodCondition(&s, corev1.PodReady, corev1.ConditionTrue, "", "", now)
	var inits []corev1.ContainerStatus
	for _, c := range pod.Spec.InitContainers {
		if sidecar(c) {
			inits = append(inits, runningContainer(pod, c, pod.Status.InitContainerStatuses, now))
			continue
		}
		st := terminatedContainer(pod, c, pod.Status.InitContainerStatuses, now)
		st.Ready, st.Started = true, ptr.To(false)
		inits = append(inits, st)
	}
	s.InitContainerStatuses = inits
	var containers []corev1.ContainerStatus
	for _, c := range pod.Spec.Containers {
		containers = append(containers, runningContainer(pod, c, pod.Status.ContainerStatuses, now))
	}
	s.ContainerStatuses = containers
	return s
}

func runningContainer(pod *corev1.Pod, c corev1.Container, previous []corev1.ContainerStatus, now metav1.Time) corev1.ContainerStatus {
	st := containerStatus(pod, c, previous)
	st.ImageID = c.Image
	st.ContainerID = containerID(pod, c.Name)
	if st.State.Running == nil {
		st.State = corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}}
	}
	st.Ready, st.Started = true, ptr.To(true)
	return st
}

// notRunnableStatus is the status of a Pod with a container of another image than pause: the
// stand-in makes no sandbox for it and starts none of its containers, so it stays Pending. The
// containers of other images wait with the reason ImageNotRunnable, the others as the kubelet
// reports containers not yet started.
func notRunnableStatus(pod *corev1.Pod, hostIP string, now metav1.Time) corev1.PodStatus {
	s := *pod.Status.DeepCopy()
	s.Phase = corev1.PodPending
	setIPs(&s, hostIP, "")
	if s.StartTime == nil {
		s.StartTime = &now
	}
	var inits, unready []string
	for _, c := range pod.Spec.InitContainers {
		inits = append(inits, c.Name)
	}
	for _, c := range pod.Spec.Containers {
		unready = append(unready, c.Name)
	}
	setPodCondition(&s, corev1.PodScheduled, corev1.ConditionTrue, "", "", now)
	setPodCondition(&s, corev1.PodReadyToStartContainers, corev1.ConditionFalse, "", "", now)
	if len(inits) > 0 {
		setPodCondition(&s, corev1.PodInitialized, corev1.ConditionFalse, "ContainersNotInitialized",
			fmt.Sprintf("containers with incomplete status: [%s]", strings.Join(inits, " ")), now)
	} else {
		setPodCondition(&s, corev1.PodInitialized, corev1.ConditionTrue, "", "", now)
	}
	unreadyMessage := fmt.Sprintf("containers with unready status: [%s]", strings.Join(unready, " "))
	setPodCondition(&s, corev1.ContainersReady, corev1.ConditionFalse, "ContainersNotReady", unreadyMessage, now)
	setPodCondition(&s, corev1.PodReady, corev1.ConditionFalse, "ContainersNotReady", unreadyMessage, now)
	var initStatuses []corev1.ContainerStatus
	for _, c := range pod.Spec.InitContainers {
		initStatuses = append(initStatuses, waitingContainer(pod, c, pod.Status.InitContainerStatuses, "PodInitializing"))
	}
	s.InitContainerStatuses = initStatuses
	var statuses []corev1.ContainerStatus
	for _, c := range pod.Spec.Containers {
		statuses = append(statuses, waitingContainer(pod, c, pod.Status.ContainerStatuses, "ContainerCreating"))
	}
	s.ContainerStatuses = statuses
	return s
}

func waitingContainer(pod *corev1.Pod, c corev1.Container, previous []corev1.ContainerStatus, reason string) corev1.ContainerStatus {
	st := containerStatus(pod, c, previous)
	waiting := &corev1.ContainerStateWaiting{Reason: reason}
	if !isPauseImage(c.Image) {
		waiting = &corev1.ContainerStateWaiting{Reason: imageNotRunnable, Message: imageNotRunnableMessage}
	}
	st.State = corev1.ContainerState{Waiting: waiting}
	st.Ready, st.Started = false, ptr.To(false)
	return st
}

// terminatedStatus is the status of a pause Pod being deleted once its containers stopped:
// every container terminated with exit code 0 (pause exits 0 on SIGTERM), and the Pod
// Succeeded, as the kubelet makes a deleted Pod terminal before it deletes it.
func terminatedStatus(pod *corev1.Pod, hostIP string, now metav1.Time) corev1.PodStatus {
	s := *pod.Status.DeepCopy()
	s.Phase = corev1.PodSucceeded
	setIPs(&s, hostIP, "")
	if s.StartTime == nil {
		s.StartTime = &now
	}
	setPodCondition(&s, corev1.PodScheduled, corev1.ConditionTrue, "", "", now)
	setPodCondition(&s, corev1.PodReadyToStartContainers, corev1.ConditionFalse, "", "", now)
	setPodCondition(&s, corev1.ContainersReady, corev1.ConditionFalse, "PodCompleted", "", now)
	setPodCondition(&s, corev1.PodReady, corev1.ConditionFalse, "PodCompleted", "", now)
	var inits []corev1.ContainerStatus
	for _, c := range pod.Spec.InitContainers {
		inits = append(inits, terminatedContainer(pod, c, pod.Status.InitContainerStatuses, now))
	}
	s.InitContainerStatuses = inits
	var containers []corev1.ContainerStatus
	for _, c := range pod.Spec.Containers {
		containers = append(containers, terminatedContainer(pod, c, pod.Status.ContainerStatuses, now))
	}
	s.ContainerStatuses = containers
	return s
}

func terminatedContainer(pod *corev1.Pod, c corev1.Container, previous []corev1.ContainerStatus, now metav1.Time) corev1.ContainerStatus {
	st := containerStatus(pod, c, previous)
	st.ImageID = c.Image
	st.ContainerID = containerID(pod, c.Name)
	if st.State.Terminated == nil {
		started := now
		if st.State.Running != nil {
			started = st.State.Running.StartedAt
		}
		st.State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			ExitCode: 0, Reason: "Completed", StartedAt: started, FinishedAt: now, ContainerID: st.ContainerID,
		}}
	}
	st.Ready, st.Started = false, ptr.To(false)
	return st
}

// containerStatus is c's status as last reported, or a new one naming it and its image.
func containerStatus(pod *corev1.Pod, c corev1.Container, previous []corev1.ContainerStatus) corev1.ContainerStatus {
	for _, st := range previous {
		if st.Name == c.Name {
			st = *st.DeepCopy()
			st.Image = c.Image
			return st
		}
	}
	return corev1.ContainerStatus{Name: c.Name, Image: c.Image}
}

// setIPs sets the Pod's host addresses, and its own address when it has none and podIP is not
// empty.
func setIPs(s *corev1.PodStatus, hostIP, podIP string) {
	s.HostIP, s.HostIPs = hostIP, []corev1.HostIP{{IP: hostIP}}
	if s.PodIP == "" && podIP != "" {
		s.PodIP, s.PodIPs = podIP, []corev1.PodIP{{IP: podIP}}
	}
}

// setPodCondition sets a condition of the Pod, keeping its transition time unless its status
// changes.
func setPodCondition(s *corev1.PodStatus, t corev1.PodConditionType, status corev1.ConditionStatus, reason, message string, now metav1.Time) {
	for i := range s.Conditions {
		c := &s.Conditions[i]
		if c.Type == t {
			if t == corev1.PodScheduled {
				return // the scheduler's, when it bound the Pod
			}
			if c.Status != status {
				c.LastTransitionTime = now
			}
			c.Status, c.Reason, c.Message = status, reason, message
			return
		}
	}
	s.Conditions = append(s.Conditions, corev1.PodCondition{
		Type: t, Status: status, Reason: reason, Message: message, LastTransitionTime: now,
	})
}
