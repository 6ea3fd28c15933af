package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"runtime"
	"strings"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
	"k8s.io/kubernetes/pkg/kubelet/certificate/bootstrap"
	"k8s.io/utils/ptr"
)

// heartbeatInterval is how often the stand-in renews its Lease and reports the Node Ready, the
// kubelet's default (nodeStatusUpdateFrequency and the lease renew interval are both 10 s).
const heartbeatInterval = 10 * time.Second

// changeSyncDelay is how long after a Pod's processes changed the runner syncs, so that one
// sync reports a burst of changes.
const changeSyncDelay = 100 * time.Millisecond

// leaseDuration is the kubelet's default nodeLeaseDurationSeconds.
const leaseDuration = 40

// kubeletStandIn stands in for the kubelet, which cannot run here (no container runtime, no
// cgroups to manage). It does the kubelet's part in the cluster's eyes: it registers the
// machine's Node with its credentials (so NodeRestriction applies), reports it Ready with a
// heartbeat every 10 s and renews its Lease in kube-node-lease. On a workload cluster's
// machine (`boot`) it runs the Pods of the pause image only, and those only in their status;
// as the management cluster's process kubelet (`kubelet`, kubelet_command.go) it runs Pods as
// local processes too (pods.go). It runs no container runtime, reports no images, and serves
// no kubelet API (logs, exec, metrics).
type kubeletStandIn struct {
	client     kubernetes.Interface
	name       string
	providerID string
	address    string
	version    string
	// stopFile, when it exists, stops the heartbeats and the pod runner (simcloud's
	// per-instance fault "the kubelet stopped"): the Node then goes NotReady through the
	// cluster's node lifecycle controller, as when a real kubelet dies. Removing it resumes
	// them.
	stopFile   string
	wasStopped bool
	// unregisteredFile, when it exists, keeps the stand-in from registering the Node
	// (simcloud's fault "the Node never registers"): it waits until the file goes. A Node
	// registered already is not affected.
	unregisteredFile string
	// onRegistered, when set, runs once the Node is registered and Ready (a control plane's
	// mark-control-plane phase).
	onRegistered func() error
	// podCIDR is the Node's spec.podCIDR once read, for the Pods' addresses; when set before
	// registering (the process kubelet's --pod-cidr), the Node is registered with it.
	podCIDR string
	// terminating holds when each Pod being deleted was first seen so, by UID.
	terminating map[types.UID]time.Time
	// capacity is what the Node reports as its capacity and allocatable; nil: a small
	// machine's (2 CPUs, 4 GiB, 110 Pods), what the workload clusters' machines report.
	capacity corev1.ResourceList
	// runtime runs Pods as processes (the process kubelet, kubelet_command.go); nil on the
	// workload clusters' machines, whose runner is the pause-only one.
	runtime *processRuntime
	// simulated reports every Pod bound to the Node Running and Ready at once and runs none
	// (the process kubelet's --simulated, for the scale benchmark).
	simulated bool
}

// newKubeletStandIn is machine m's kubelet stand-in talking to the cluster through client,
// with the machine's fault files; it registers nothing yet.
func newKubeletStandIn(m machine, client kubernetes.Interface, version string) *kubeletStandIn {
	return &kubeletStandIn{
		client:           client,
		name:             m.Name,
		providerID:       m.ProviderID,
		address:          m.Address,
		version:          version,
		stopFile:         m.kubeletStopFile(),
		unregisteredFile: m.nodeUnregisteredFile(),
	}
}

// tlsBootstrap is the kubelet's TLS bootstrap, with the kubelet's own code: with the bootstrap
// kubeconfig, it posts a CSR for signer kubernetes.io/kube-apiserver-client-kubelet as
// system:node:<name> in system:nodes, waits for the controller manager to approve and sign
// it, and writes kubeconfigPath naming the client certificate in certDir.
func tlsBootstrap(ctx context.Context, kubeconfigPath, bootstrapPath, certDir, nodeName string) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	if err := bootstrap.LoadClientCert(ctx, kubeconfigPath, bootstrapPath, certDir, types.NodeName(nodeName)); err != nil {
		return fmt.Errorf("TLS bootstrap of node %s with %s: %w", nodeName, bootstrapPath, err)
	}
	return nil
}

// unregisteredCheckInterval is how often a stand-in held back by the node-unregistered fault
// looks whether it may register.
const unregisteredCheckInterval = 2 * time.Second

// heldBack reports whether the node-unregistered fault is in force.
func (k *kubeletStandIn) heldBack() bool {
	if k.unregisteredFile == "" {
		return false
	}
	_, err := os.Stat(k.unregisteredFile)
	return err == nil
}

// waitWhileHeldBack returns once the node-unregistered fault is not in force (at once when it
// is not), checking every unregisteredCheckInterval and logging the wait once.
func (k *kubeletStandIn) waitWhileHeldBack(ctx context.Context) error {
	if !k.heldBack() {
		return nil
	}
	log.Printf("node %s: not registering while fault %s exists", k.name, k.unregisteredFile)
	for k.heldBack() {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(unregisteredCheckInterval):
		}
	}
	log.Printf("node %s: fault %s removed; registering", k.name, k.unregisteredFile)
	return nil
}

// register creates the Node (or finds the one this machine made before a restart), reports
// it Ready once and runs onRegistered; first it waits while the node-unregistered fault holds
// it back.
func (k *kubeletStandIn) register(ctx context.Context) error {
	if err := k.waitWhileHeldBack(ctx); err != nil {
		return err
	}
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name: k.name,
			Labels: map[string]string{
				"kubernetes.io/hostname":  k.name,
				"kubernetes.io/os":        runtime.GOOS,
				"kubernetes.io/arch":      runtime.GOARCH,
				"beta.kubernetes.io/os":   runtime.GOOS,
				"beta.kubernetes.io/arch": runtime.GOARCH,
			},
		},
		Spec: corev1.NodeSpec{ProviderID: k.providerID},
	}
	if k.podCIDR != "" {
		node.Spec.PodCIDR, node.Spec.PodCIDRs = k.podCIDR, []string{k.podCIDR}
	}
	var lastErr error
	for i := 0; i < 60; i++ {
		_, err := k.client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
		if err == nil || apierrors.IsAlreadyExists(err) {
			lastErr = nil
			break
		}
		lastErr = err
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(2 * time.Second):
		}
	}
	if lastErr != nil {
		return fmt.Errorf("registering Node %s: %w", k.name, lastErr)
	}
	if err := k.heartbeat(ctx); err != nil {
		return fmt.Errorf("reporting Node %s Ready: %w", k.name, err)
	}
	if k.onRegistered != nil {
		return k.onRegistered()
	}
	return nil
}

// run sends a heartbeat every heartbeatInterval and syncs the Node's Pods every
// podSyncInterval until ctx ends, both from this one goroutine. A failed heartbeat or Pod
// update is logged and retried at the next tick, as the kubelet does.
func (k *kubeletStandIn) run(ctx context.Context) {
	heartbeats := time.NewTicker(heartbeatInterval)
	defer heartbeats.Stop()
	pods := time.NewTicker(podSyncInterval)
	defer pods.Stop()
	var changed chan struct{} // a Pod's processes changed: report it without waiting for the tick
	if k.runtime != nil {
		changed = k.runtime.changed
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-changed:
			if k.stopped() {
				continue
			}
			// Changes come in bursts (a Pod's containers start together): one sync for each
			// burst.
			select {
			case <-ctx.Done():
				return
			case <-time.After(changeSyncDelay):
			}
			k.syncPods(ctx)
		case <-heartbeats.C:
			if k.stopped() {
				continue
			}
			if err := k.heartbeat(ctx); err != nil && ctx.Err() == nil {
				log.Printf("node %s heartbeat: %v", k.name, err)
			}
		case <-pods.C:
			if k.stopped() {
				continue
			}
			k.syncPods(ctx)
		}
	}
}

// stopped reports whether the kubelet-stopped fault is in force, logging each change.
func (k *kubeletStandIn) stopped() bool {
	if k.stopFile == "" {
		return false
	}
	_, err := os.Stat(k.stopFile)
	stopped := err == nil
	if stopped != k.wasStopped {
		log.Printf("node %s: heartbeats and pod updates stopped by fault: %v", k.name, stopped)
		k.wasStopped = stopped
	}
	return stopped
}

func (k *kubeletStandIn) heartbeat(ctx context.Context) error {
	if err := k.updateStatus(ctx); err != nil {
		return err
	}
	return k.renewLease(ctx)
}

// updateStatus reports the Node Ready, retrying on a conflict with the controllers that write
// the Node too (the CIDR allocator, the node lifecycle controller). A taint the node lifecycle
// controller added between the read and the write shows up as a refusal, not a conflict: the
// NodeRestriction admission plugin, which runs before the resourceVersion check, sees the stale
// copy's taints as this node changing its own. That is retried from a fresh read too.
func (k *kubeletStandIn) updateStatus(ctx context.Context) error {
	return retry.OnError(retry.DefaultRetry, staleWrite, func() error { return k.tryUpdateStatus(ctx) })
}

// staleWrite: the write failed only because the Node changed since it was read.
func staleWrite(err error) bool {
	return apierrors.IsConflict(err) ||
		(apierrors.IsForbidden(err) && strings.Contains(err.Error(), "not allowed to modify taints"))
}

func (k *kubeletStandIn) tryUpdateStatus(ctx context.Context) error {
	node, err := k.client.CoreV1().Nodes().Get(ctx, k.name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	now := metav1.Now()
	setCondition(&node.Status, corev1.NodeReady, corev1.ConditionTrue, "KubeletReady", "kubelet stand-in is posting ready status", now)
	setCondition(&node.Status, corev1.NodeMemoryPressure, corev1.ConditionFalse, "KubeletHasSufficientMemory", "kubelet stand-in has sufficient memory available", now)
	setCondition(&node.Status, corev1.NodeDiskPressure, corev1.ConditionFalse, "KubeletHasNoDiskPressure", "kubelet stand-in has no disk pressure", now)
	setCondition(&node.Status, corev1.NodePIDPressure, corev1.ConditionFalse, "KubeletHasSufficientPID", "kubelet stand-in has sufficient PID available", now)
	node.Status.Addresses = []corev1.NodeAddress{
		{Type: corev1.NodeInternalIP, Address: k.address},
		{Type: corev1.NodeHostName, Address: k.name},
	}
	capacity := k.capacity
	if capacity == nil {
		capacity = corev1.ResourceList{
			corev1.ResourceCPU:    resource.MustParse("2"),
			corev1.ResourceMemory: resource.MustParse("4Gi"),
			corev1.ResourcePods:   resource.MustParse("110"),
		}
	}
	node.Status.Capacity = capacity
	node.Status.Allocatable = capacity
	node.Status.NodeInfo.KubeletVersion = k.version
	node.Status.NodeInfo.OperatingSystem = runtime.GOOS
	node.Status.NodeInfo.Architecture = runtime.GOARCH
	_, err = k.client.CoreV1().Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{})
	return err
}

func setCondition(status *corev1.NodeStatus, t corev1.NodeConditionType, s corev1.ConditionStatus, reason, message string, now metav1.Time) {
	for i := range status.Conditions {
		c := &status.Conditions[i]
		if c.Type == t {
			if c.Status != s {
				c.LastTransitionTime = now
			}
			c.Status, c.Reason, c.Message, c.LastHeartbeatTime = s, reason, message, now
			return
		}
	}
	status.Conditions = append(status.Conditions, corev1.NodeCondition{
		Type: t, Status: s, Reason: reason, Message: message, LastHeartbeatTime: now, LastTransitionTime: now,
	})
}

func (k *kubeletStandIn) renewLease(ctx context.Context) error {
	leases := k.client.CoordinationV1().Leases("kube-node-lease")
	now := metav1.NewMicroTime(time.Now())
	lease, err := leases.Get(ctx, k.name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		_, err = leases.Create(ctx, &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Name: k.name, Namespace: "kube-node-lease"},
			Spec: coordinationv1.LeaseSpec{
				HolderIdentity:       ptr.To(k.name),
				LeaseDurationSeconds: ptr.To(int32(leaseDuration)),
				RenewTime:            &now,
			},
		}, metav1.CreateOptions{})
		return err
	}
	if err != nil {
		return err
	}
	lease.Spec.RenewTime = &now
	lease.Spec.HolderIdentity = ptr.To(k.name)
	lease.Spec.LeaseDurationSeconds = ptr.To(int32(leaseDuration))
	_, err = leases.Update(ctx, lease, metav1.UpdateOptions{})
	return err
}
