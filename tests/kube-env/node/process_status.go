package main

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// What a Pod run as processes reports, as the kubelet computes it from its containers: a pure
// function of a snapshot of the worker, so that the same state gives the same status at every
// sync and nothing is written again.

// containerSnapshot is one container as the worker last saw it.
type containerSnapshot struct {
	name, image          string
	kind                 containerKind
	state                corev1.ContainerState
	last                 *corev1.ContainerStateTerminated
	restartCount         int32
	started, ready, done bool
	exitCode             int32
}

// podSnapshot is a Pod's worker as last seen.
type podSnapshot struct {
	// setupWaiting is why no container is created yet, nil once they can be.
	setupWaiting *corev1.ContainerStateWaiting
	initialized  bool
	// terminal: the Pod will run nothing again (its containers finished, or it was stopped)
	// and every process has ended.
	terminal     bool
	inits, mains []containerSnapshot
}

func (w *podWorker) snapshot() podSnapshot {
	w.mu.Lock()
	defer w.mu.Unlock()
	// A stopping Pod whose last process has ended is terminal at once: the stop closes
	// w.stopped a moment after it sees the last exit, and a status written in between must
	// not show the containers terminated in a Pod still Running.
	terminal := w.isStopped()
	if w.stopping && !terminal {
		terminal = true
		for _, c := range append(append([]*containerRun{}, w.inits...), w.mains...) {
			if c.instance != nil {
				terminal = false
			}
		}
	}
	snap := podSnapshot{initialized: w.initialized, terminal: terminal}
	if w.setupWaiting != nil {
		snap.setupWaiting = w.setupWaiting.DeepCopy()
	}
	take := func(c *containerRun) containerSnapshot {
		cs := containerSnapshot{
			name: c.spec.Name, image: c.spec.Image, kind: c.kind, state: *c.state.DeepCopy(),
			restartCount: c.restartCount, started: c.started, ready: c.ready, done: c.done, exitCode: c.exitCode,
		}
		// The last termination is the instance before the one the state shows.
		if c.state.Terminated != nil {
			cs.last = c.priorTerminated.DeepCopy()
		} else {
			cs.last = c.lastTerminated.DeepCopy()
		}
		return cs
	}
	for _, c := range w.inits {
		snap.inits = append(snap.inits, take(c))
	}
	for _, c := range w.mains {
		snap.mains = append(snap.mains, take(c))
	}
	return snap
}

// processPodStatus is pod's status from its worker's snapshot.
func processPodStatus(pod *corev1.Pod, snap podSnapshot, hostIP, podIP string, now metav1.Time) corev1.PodStatus {
	s := *pod.Status.DeepCopy()
	s.Reason, s.Message = "", ""
	setIPs(&s, hostIP, podIP)
	if s.StartTime == nil {
		s.StartTime = &now
	}
	containerStatus := func(c containerSnapshot) corev1.ContainerStatus {
		st := corev1.ContainerStatus{
			Name: c.name, Image: c.image, ImageID: c.image, State: c.state, RestartCount: c.restartCount,
			Ready: c.ready, Started: ptr.To(c.started),
		}
		if c.last != nil {
			st.LastTerminationState = corev1.ContainerState{Terminated: c.last}
		}
		if c.state.Waiting == nil || c.restartCount > 0 || c.last != nil {
			st.ContainerID = containerID(pod, c.name)
		}
		if snap.setupWaiting != nil && c.state.Waiting != nil {
			st.State = corev1.ContainerState{Waiting: snap.setupWaiting}
		}
		return st
	}
	var inits, mains []corev1.ContainerStatus
	var incomplete, unready []string
	initFailed := false
	for _, c := range snap.inits {
		inits = append(inits, containerStatus(c))
		switch {
		case c.kind == kindSidecar && !c.started:
			incomplete = append(incomplete, c.name)
		case c.kind == kindInit && (c.state.Terminated == nil || c.state.Terminated.ExitCode != 0):
			incomplete = append(incomplete, c.name)
			if c.done && c.state.Terminated != nil {
				initFailed = true
			}
		}
	}
	allSucceeded := true
	anyRunning := false
	for _, c := range snap.mains {
		mains = append(mains, containerStatus(c))
		if !c.ready {
			unready = append(unready, c.name)
		}
		if c.state.Terminated == nil || c.state.Terminated.ExitCode != 0 {
			allSucceeded = false
		}
		if c.state.Running != nil || c.restartCount > 0 || c.last != nil || c.state.Terminated != nil {
			anyRunning = true
		}
	}
	s.InitContainerStatuses, s.ContainerStatuses = inits, mains

	switch {
	case snap.terminal && (initFailed || !allSucceeded || !snap.initialized):
		s.Phase = corev1.PodFailed
	case snap.terminal:
		s.Phase = corev1.PodSucceeded
	case !snap.initialized:
		s.Phase = corev1.PodPending
	case anyRunning:
		s.Phase = corev1.PodRunning
	default:
		s.Phase = corev1.PodPending
	}

	setPodCondition(&s, corev1.PodScheduled, corev1.ConditionTrue, "", "", now)
	setPodCondition(&s, corev1.PodReadyToStartContainers, boolCondition(!snap.terminal), "", "", now)
	if snap.initialized {
		setPodCondition(&s, corev1.PodInitialized, corev1.ConditionTrue, "", "", now)
	} else {
		setPodCondition(&s, corev1.PodInitialized, corev1.ConditionFalse, "ContainersNotInitialized",
			fmt.Sprintf("containers with incomplete status: [%s]", strings.Join(incomplete, " ")), now)
	}
	if snap.terminal {
		setPodCondition(&s, corev1.ContainersReady, corev1.ConditionFalse, "PodCompleted", "", now)
		setPodCondition(&s, corev1.PodReady, corev1.ConditionFalse, "PodCompleted", "", now)
		return s
	}
	if len(unready) > 0 {
		msg := fmt.Sprintf("containers with unready status: [%s]", strings.Join(unready, " "))
		setPodCondition(&s, corev1.ContainersReady, corev1.ConditionFalse, "ContainersNotReady", msg, now)
		setPodCondition(&s, corev1.PodReady, corev1.ConditionFalse, "ContainersNotReady", msg, now)
		return s
	}
	setPodCondition(&s, corev1.ContainersReady, corev1.ConditionTrue, "", "", now)
	if gates := unreadyGates(pod); len(gates) > 0 {
		setPodCondition(&s, corev1.PodReady, corev1.ConditionFalse, "ReadinessGatesNotReady",
			fmt.Sprintf("corresponding condition of pod readiness gate %q does not exist or is not True", strings.Join(gates, ", ")), now)
		return s
	}
	setPodCondition(&s, corev1.PodReady, corev1.ConditionTrue, "", "", now)
	return s
}

func boolCondition(b bool) corev1.ConditionStatus {
	if b {
		return corev1.ConditionTrue
	}
	return corev1.ConditionFalse
}

// unreadyGates are the Pod's readiness gates whose condition is not True.
func unreadyGates(pod *corev1.Pod) []string {
	var out []string
	for _, g := range pod.Spec.ReadinessGates {
		ok := false
		for _, c := range pod.Status.Conditions {
			if c.Type == g.ConditionType && c.Status == corev1.ConditionTrue {
				ok = true
			}
		}
		if !ok {
			out = append(out, string(g.ConditionType))
		}
	}
	return out
}

// refusedStatus is the status of a Pod the stand-in will not run: Pending, every container
// waiting with reason and the message (the refused fields, or the unknown images), and the
// Pod's readiness conditions saying why.
func refusedStatus(pod *corev1.Pod, hostIP string, now metav1.Time, waiting func(c corev1.Container) *corev1.ContainerStateWaiting) corev1.PodStatus {
	s := notRunnableStatus(pod, hostIP, now)
	for i := range s.InitContainerStatuses {
		if w := waiting(pod.Spec.InitContainers[i]); w != nil {
			s.InitContainerStatuses[i].State = corev1.ContainerState{Waiting: w}
		}
	}
	for i := range s.ContainerStatuses {
		if w := waiting(pod.Spec.Containers[i]); w != nil {
			s.ContainerStatuses[i].State = corev1.ContainerState{Waiting: w}
		}
	}
	return s
}
