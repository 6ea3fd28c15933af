package capw

import (
	"fmt"
	"time"
)

// ClusterRef identifies the cluster a call concerns.
type ClusterRef struct {
	// Namespace of the Cluster object ("default" in the embedded mode).
	Namespace string
	// Name of the Cluster object.
	Name string
	// UID of the Cluster object; it changes when a cluster of the same name is recreated.
	UID string
}

// MachineRef identifies a machine inside its cluster.
type MachineRef struct {
	// Name of the Machine object, unique within the cluster.
	Name string
	// UID of the Machine object.
	UID string
}

// KubernetesVersion is a Kubernetes release: v1.35.2 is {1, 35, 2}.
type KubernetesVersion struct {
	Major, Minor, Patch uint32
}

// String is the Kubernetes spelling, e.g. v1.35.2.
func (v KubernetesVersion) String() string {
	return fmt.Sprintf("v%d.%d.%d", v.Major, v.Minor, v.Patch)
}

// MachineRole says what a machine is for.
type MachineRole uint8

// The roles of a machine.
const (
	// RoleInit is the first control-plane machine: it initialises the cluster.
	RoleInit MachineRole = iota
	// RoleJoinControlPlane is a control-plane machine joining an initialised cluster.
	RoleJoinControlPlane
	// RoleWorker is a worker node.
	RoleWorker
)

// String is the contract's name of the role: init, join-control-plane or worker.
func (r MachineRole) String() string {
	switch r {
	case RoleInit:
		return "init"
	case RoleJoinControlPlane:
		return "join-control-plane"
	case RoleWorker:
		return "worker"
	}
	return fmt.Sprintf("role(%d)", uint8(r))
}

// AddressKind is the kind of a machine address, as in Kubernetes NodeAddress.
type AddressKind uint8

// The kinds of address.
const (
	AddressHostname AddressKind = iota
	AddressInternalIP
	AddressExternalIP
	AddressInternalDNS
	AddressExternalDNS
)

// Address is one address of a machine.
type Address struct {
	Kind    AddressKind
	Address string
}

// Endpoint is where a cluster's API server is reached.
type Endpoint struct {
	Host string
	Port uint16
}

// ConditionStatus is the status of a condition, as in Kubernetes metav1.Condition.
type ConditionStatus uint8

// The statuses of a condition.
const (
	ConditionTrue ConditionStatus = iota
	ConditionFalse
	ConditionUnknown
)

// Condition is a condition the host copies onto the object the call concerns, prefixed with
// the extension point (e.g. InfrastructureNetworkReady).
type Condition struct {
	// Type is CamelCase, e.g. NetworkReady.
	Type   string
	Status ConditionStatus
	// Reason is CamelCase, e.g. WaitingForLoadBalancer.
	Reason string
	// Message is for humans; never put secret material in it.
	Message string
}

// DefaultRequeueAfter is the requeue hint [NewInProgress] starts with.
const DefaultRequeueAfter = 5 * time.Second

// InProgress is the answer of a call whose work has started and not finished. The host
// records the message and calls the same function again, with the same idempotency key, after
// RequeueAfter (or sooner). A provider never blocks to wait instead.
type InProgress struct {
	// Reason is CamelCase, e.g. InstanceBooting.
	Reason  string
	Message string
	// RequeueAfter is the hint for when to call again; the contract carries milliseconds.
	RequeueAfter time.Duration
	// Conditions to show while the work goes on.
	Conditions []Condition
}

// NewInProgress is work under way, to be looked at again after [DefaultRequeueAfter] unless
// [InProgress.After] says otherwise.
func NewInProgress(reason, message string) InProgress {
	return InProgress{Reason: reason, Message: message, RequeueAfter: DefaultRequeueAfter}
}

// After sets the requeue hint.
func (p InProgress) After(d time.Duration) InProgress {
	p.RequeueAfter = d
	return p
}

// WithCondition adds a condition to show while the work goes on.
func (p InProgress) WithCondition(c Condition) InProgress {
	p.Conditions = append(append([]Condition(nil), p.Conditions...), c)
	return p
}

// Deletion is the answer of a delete: deleted, or under way.
type Deletion struct {
	// InProgress is set while the deletion goes on; nil means nothing is left.
	InProgress *InProgress
}

// Deleted is the answer when nothing is left, also when there was nothing to delete.
var Deleted = Deletion{}

// DeletionInProgress is a deletion that has started; the host calls again.
func DeletionInProgress(p InProgress) Deletion {
	return Deletion{InProgress: &p}
}

// Done reports whether nothing is left.
func (d Deletion) Done() bool { return d.InProgress == nil }

// Millis is d in whole milliseconds as the contract carries durations: negative durations
// are 0 and durations past the range of u32 (about 49 days) saturate, so that a long hint
// stays long.
func Millis(d time.Duration) uint32 {
	ms := d.Milliseconds()
	switch {
	case ms < 0:
		return 0
	case ms > int64(^uint32(0)):
		return ^uint32(0)
	}
	return uint32(ms)
}
