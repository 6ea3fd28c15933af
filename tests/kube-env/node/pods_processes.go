package main

import (
	"context"
	"fmt"
	"log"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// The sync's side of Pods run as processes: it starts a worker for a new Pod, reports what
// the worker does, stops it when the Pod is deleted and deletes the Pod once its processes
// ended.

// goneGracePeriod is what the processes of a Pod that vanished without the runner seeing it
// deleted (a forced deletion) get between SIGTERM and SIGKILL: the kubelet's minimum.
const goneGracePeriod = 2 * time.Second

// startProcessPod gives a new Pod its address, reports it (before any container starts, so
// that the address is in the status the containers' downward API reads), then starts its
// worker.
func (k *kubeletStandIn) startProcessPod(ctx context.Context, pod *corev1.Pod, usedIPs map[string]bool, now metav1.Time) error {
	podIP := pod.Status.PodIP
	switch {
	case pod.Spec.HostNetwork:
		podIP = k.address
	case podIP == "":
		podIP = k.allocatePodIP(ctx, usedIPs)
		if podIP == "" {
			return fmt.Errorf("no free address in the pod CIDR %q", k.podCIDR)
		}
	}
	w := newPodWorker(k.runtime, pod, podIP, k.address)
	if err := k.writeStatus(ctx, pod, processPodStatus(pod, w.snapshot(), k.address, podIP, now)); err != nil {
		return err
	}
	k.runtime.workers[pod.UID] = w
	log.Printf("node %s: Pod %s/%s runs as processes on %s, in %s", k.name, pod.Namespace, pod.Name, podIP, w.dir)
	w.start()
	return nil
}

// syncProcessPod reports a running Pod's status, refreshing its hosts file; for a Pod being
// deleted it stops the worker (with the deletion's grace period), reports the containers
// terminated once they all ended, and then deletes the Pod.
func (k *kubeletStandIn) syncProcessPod(ctx context.Context, pod *corev1.Pod, w *podWorker, now metav1.Time) error {
	if err := w.refreshHosts(); err != nil {
		log.Printf("node %s: Pod %s/%s: hosts file: %v", k.name, pod.Namespace, pod.Name, err)
	}
	if pod.DeletionTimestamp != nil {
		w.mu.Lock()
		stopping := w.stopping
		if !stopping {
			w.pod.DeletionGracePeriodSeconds = pod.DeletionGracePeriodSeconds
		}
		w.mu.Unlock()
		if !stopping {
			grace := w.gracePeriod()
			log.Printf("node %s: Pod %s/%s deleted: stopping its containers (grace period %s)", k.name, pod.Namespace, pod.Name, grace)
			go w.stop(grace)
		}
	}
	status := processPodStatus(pod, w.snapshot(), k.address, w.podIP, now)
	if err := k.writeStatus(ctx, pod, status); err != nil {
		return err
	}
	if pod.DeletionTimestamp == nil || !w.isStopped() {
		return nil
	}
	deleted, err := k.deleteOnceNoticed(ctx, pod, now)
	if deleted {
		w.cleanup()
		delete(k.runtime.workers, pod.UID)
	}
	return err
}

// forgetGone stops the workers of Pods that are no longer bound here (deleted by force, or
// deleted by the runner), and forgets them.
func (rt *processRuntime) forgetGone(seen map[types.UID]bool) {
	for uid, w := range rt.workers {
		if seen[uid] {
			continue
		}
		delete(rt.workers, uid)
		go func() {
			w.stop(goneGracePeriod)
			w.cleanup()
		}()
	}
}
