package capw

// LifecycleHooks is the optional hooks at the points of a cluster's life, after Cluster API's
// Runtime SDK. A provider that implements it declares it.
type LifecycleHooks[C any] interface {
	// Handle is called at each hook point until it answers [Proceed]. It must be idempotent:
	// the host may call the same hook more than once.
	Handle(ctx *Context[C], request HookRequest) (HookResponse, error)
}

// Hook is a point of a cluster's life.
type Hook uint8

// The hook points, in the contract's order.
const (
	BeforeClusterCreate Hook = iota
	AfterControlPlaneInitialized
	BeforeClusterUpgrade
	AfterControlPlaneUpgrade
	AfterClusterUpgrade
	BeforeClusterDelete
)

// HookRequest is the hook being called.
type HookRequest struct {
	Hook Hook
	// FromVersion is the version before an upgrade; nil outside upgrades.
	FromVersion *KubernetesVersion
	// ToVersion is the version the cluster has, or goes to.
	ToVersion KubernetesVersion
}

// HookResponse is go on, or hold this transition.
type HookResponse struct {
	// Hold is set to hold the transition (only this one) and be called again after its hint.
	Hold *InProgress
}

// Proceed lets the transition go on.
var Proceed = HookResponse{}

// HoldFor holds the transition until a later call answers [Proceed].
func HoldFor(p InProgress) HookResponse {
	return HookResponse{Hold: &p}
}
