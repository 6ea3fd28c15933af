package capw

import (
	"fmt"
	"math"
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

// Compare orders versions: -1 when v is older than w, 0 when they are the same, +1 when v is
// newer.
func (v KubernetesVersion) Compare(w KubernetesVersion) int {
	switch {
	case v.Major != w.Major:
		return cmpUint(v.Major, w.Major)
	case v.Minor != w.Minor:
		return cmpUint(v.Minor, w.Minor)
	}
	return cmpUint(v.Patch, w.Patch)
}

func cmpUint(a, b uint32) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// JoinToken is a bootstrap token (Kubernetes' Secret type bootstrap.kubernetes.io/token): the
// credential a joining machine's data carries and the workload cluster must still accept. A
// bootstrap provider names the one its join data carries ([JoinTokens]); a managed control
// plane hands one out with its access ([ControlPlaneAccess]). Since contract 0.3.
//
// Its Secret is secret: [JoinToken.String] leaves it out, so that a token printed with %v or
// %+v never shows it; never log [JoinToken.Token].
type JoinToken struct {
	// Item is the item of the cluster's secrets that holds it (as <id>.<secret>), which
	// Generate reads. The host replaces that item when it renews the token.
	Item string
	// ID is [a-z0-9]{6}: public; the workload cluster keeps the token as Secret
	// kube-system/bootstrap-token-<id>.
	ID string
	// Secret is [a-z0-9]{16}. Secret: never log it.
	Secret string
	// TTL is how long the workload cluster accepts it from when it is written there; 0: it
	// never expires. The contract carries whole seconds ([Seconds]).
	TTL time.Duration
	// ExtraGroups are the groups it authenticates as besides system:bootstrappers (the
	// Secret's auth-extra-groups), e.g. the group the cluster's RBAC lets post node CSRs.
	ExtraGroups []string
}

// Token is the token as a join presents it, <id>.<secret>: what the item of the cluster's
// secrets holds. Secret: never log it.
func (t JoinToken) Token() string { return t.ID + "." + t.Secret }

// String names the token by its id and item, without its secret.
func (t JoinToken) String() string {
	return fmt.Sprintf("join token %s (item %s, ttl %s)", t.ID, t.Item, t.TTL)
}

// GoString is [JoinToken.String], so that %#v leaves the secret out too.
func (t JoinToken) GoString() string { return t.String() }

// Seconds is d in whole seconds as the contract carries a token's lifetime: a fraction of a
// second is rounded up, so that a short lifetime never becomes 0 (which means never expires),
// and a negative duration is 0.
func Seconds(d time.Duration) uint64 {
	if d <= 0 {
		return 0
	}
	return uint64((d + time.Second - 1) / time.Second)
}

// FromSeconds is a lifetime in whole seconds as a duration, saturating at the longest
// duration (about 292 years) rather than wrapping.
func FromSeconds(s uint64) time.Duration {
	const most = uint64(math.MaxInt64 / int64(time.Second))
	if s > most {
		return time.Duration(math.MaxInt64)
	}
	return time.Duration(s) * time.Second
}
