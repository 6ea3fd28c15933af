package capw

import "time"

// Infrastructure is the infrastructure extension point: networks, the control-plane endpoint
// and machines. A provider that implements it declares it; embed [UnsupportedInfrastructure]
// to leave some of its functions unsupported.
//
// Every method returns an error that [AsProviderError] reads: a [*ProviderError] (or one
// wrapped) says exactly what the host sees.
type Infrastructure[C any] interface {
	// ReconcileCluster creates or updates the cluster-wide infrastructure (network, load
	// balancer, endpoint). Idempotent; in-progress until the control-plane endpoint is usable.
	ReconcileCluster(ctx *Context[C]) (ClusterState, error)
	// DeleteCluster deletes the cluster-wide infrastructure; the host calls it only after
	// every machine is deleted. Deleting what is already gone answers [Deleted].
	DeleteCluster(ctx *Context[C]) (Deletion, error)
	// ReconcileMachine creates the machine if none exists for ctx.IdempotencyKey(), and
	// reports its status. Calling it again with the same key never creates a second machine.
	ReconcileMachine(ctx *Context[C], spec MachineSpec) (MachineStatus, error)
	// DeleteMachine deletes the machine created with ctx.IdempotencyKey(). A machine already
	// gone, or never created, answers [Deleted].
	DeleteMachine(ctx *Context[C], machine MachineRef) (Deletion, error)
	// ListMachines is every machine that exists for ctx.Cluster(), whatever the host knows of
	// it; the host deletes those it has no Machine for (orphans).
	ListMachines(ctx *Context[C]) ([]ListedMachine, error)
}

// UnsupportedInfrastructure answers unsupported to every infrastructure function; embed it
// and override the functions the provider serves.
type UnsupportedInfrastructure[C any] struct{}

// ReconcileCluster answers unsupported.
func (UnsupportedInfrastructure[C]) ReconcileCluster(*Context[C]) (ClusterState, error) {
	return ClusterState{}, Unsupported("infrastructure.reconcile-cluster")
}

// DeleteCluster answers unsupported.
func (UnsupportedInfrastructure[C]) DeleteCluster(*Context[C]) (Deletion, error) {
	return Deletion{}, Unsupported("infrastructure.delete-cluster")
}

// ReconcileMachine answers unsupported.
func (UnsupportedInfrastructure[C]) ReconcileMachine(*Context[C], MachineSpec) (MachineStatus, error) {
	return MachineStatus{}, Unsupported("infrastructure.reconcile-machine")
}

// DeleteMachine answers unsupported.
func (UnsupportedInfrastructure[C]) DeleteMachine(*Context[C], MachineRef) (Deletion, error) {
	return Deletion{}, Unsupported("infrastructure.delete-machine")
}

// ListMachines answers unsupported.
func (UnsupportedInfrastructure[C]) ListMachines(*Context[C]) ([]ListedMachine, error) {
	return nil, Unsupported("infrastructure.list-machines")
}

// FailureDomain is a place machines can be spread over (a zone).
type FailureDomain struct {
	Name string
	// ControlPlane: control-plane machines may be placed here.
	ControlPlane bool
}

// ClusterInfrastructure is the cluster-wide infrastructure, once it exists.
type ClusterInfrastructure struct {
	// ControlPlaneEndpoint is where the API server will be reached (e.g. a load balancer);
	// nil when the infrastructure makes no endpoint because a service runs the control plane
	// (the hosted and managed shapes), whose control-plane provider reports its own. Since
	// contract 0.3 (before, an empty host said so).
	ControlPlaneEndpoint *Endpoint
	FailureDomains       []FailureDomain
	Conditions           []Condition
}

// ClusterState is the answer of ReconcileCluster: ready, or in progress.
type ClusterState struct {
	// Ready is set once the infrastructure exists.
	Ready *ClusterInfrastructure
	// InProgress is set while it does not yet.
	InProgress *InProgress
}

// ClusterReady is the infrastructure, ready.
func ClusterReady(infra ClusterInfrastructure) ClusterState {
	return ClusterState{Ready: &infra}
}

// ClusterInProgress is infrastructure under way.
func ClusterInProgress(p InProgress) ClusterState {
	return ClusterState{InProgress: &p}
}

// MachineSpec is what the host wants a machine to be.
type MachineSpec struct {
	Machine MachineRef
	Role    MachineRole
	// Pool is the worker pool's name; control-plane for control-plane machines.
	Pool    string
	Version KubernetesVersion
	// FailureDomain is chosen by the host from the cluster's failure domains; "" when there
	// are none.
	FailureDomain string
	// BootstrapData is the bootstrap provider's data (e.g. cloud-init) to hand to the machine
	// at creation. Secret: never log it.
	BootstrapData []byte
}

// MachinePhase is the lifecycle phase of a machine, as the infrastructure sees it.
type MachinePhase uint8

// The phases of a machine.
const (
	// PhasePending: accepted, not yet started.
	PhasePending MachinePhase = iota
	// PhaseProvisioning: being created or booting.
	PhaseProvisioning
	// PhaseRunning: running and its node is ready.
	PhaseRunning
	// PhaseFailed: failed for good; the host deletes and replaces it.
	PhaseFailed
	// PhaseDeleting: being deleted.
	PhaseDeleting
)

// String is the contract's name of the phase.
func (p MachinePhase) String() string {
	return [...]string{"pending", "provisioning", "running", "failed", "deleting"}[min(int(p), 4)]
}

// MachineStatus is what the infrastructure knows of a machine.
type MachineStatus struct {
	// ProviderID is the cloud's id, e.g. sim://instances/i-123; "" until the cloud assigned one.
	ProviderID string
	Phase      MachinePhase
	Addresses  []Address
	// FailureDomain is where the machine is; "" when unknown.
	FailureDomain string
	Message       string
	// RequeueAfter is when to look again while the phase is neither running nor failed; zero
	// for none.
	RequeueAfter time.Duration
	Conditions   []Condition
}

// ListedMachine is a machine found in the infrastructure for a cluster.
type ListedMachine struct {
	// IdempotencyKey is the key the machine was created with.
	IdempotencyKey string
	ProviderID     string
	// MachineName is the Machine it was created for.
	MachineName string
	Phase       MachinePhase
}
