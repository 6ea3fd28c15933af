package capw

// ControlPlane is the control-plane extension point: the next safe step toward the desired
// control plane. The host owns the machines and applies one step at a time; the provider
// decides which step is safe. A provider that implements it declares it, with the shape and
// capabilities [ControlPlane.ControlPlaneCapabilities] answers.
type ControlPlane[C any] interface {
	// ControlPlaneCapabilities is how the provider runs control planes and what it can change;
	// the host refuses a topology the provider cannot serve before it calls anything.
	ControlPlaneCapabilities() ControlPlaneCapabilities
	// Plan is pure and deterministic for the same input: the host may call it as often as it
	// likes. It refuses (invalid-input or unsupported) a desired state it cannot reach safely.
	Plan(ctx *Context[C], input PlanInput) (PlanOutput, error)
}

// ControlPlaneShape is how a control-plane provider runs the control plane.
type ControlPlaneShape uint8

// The shapes of a control plane.
const (
	// ShapeMachines: on machines of the cluster itself (kubeadm-like).
	ShapeMachines ControlPlaneShape = iota
	// ShapeHosted: as workloads in the management cluster, from manifests the host applies.
	ShapeHosted
	// ShapeManaged: as a managed service behind a cloud API the provider calls.
	ShapeManaged
)

// ControlPlaneCapabilities is what a control-plane provider can do.
type ControlPlaneCapabilities struct {
	Shape ControlPlaneShape
	// Scalable: the control plane can change its replica count after creation.
	Scalable bool
	// VersionUpgrades: the provider can upgrade the Kubernetes version in place.
	VersionUpgrades bool
}

// Member is an existing control-plane member as the host observes it.
type Member struct {
	Machine       MachineRef
	Version       KubernetesVersion
	FailureDomain string
	// Ready: its node is ready.
	Ready bool
	// CreatedAt is seconds since the Unix epoch; it orders members oldest first.
	CreatedAt uint64
	// Deleting: being deleted already.
	Deleting bool
}

// PlanInput is the desired control plane and what exists.
type PlanInput struct {
	Version  KubernetesVersion
	Replicas uint32
	Members  []Member
	// FailureDomains may hold control-plane machines.
	FailureDomains []string
	// Endpoint is the infrastructure's, when known.
	Endpoint *Endpoint
}

// MachineToCreate is a machine the host is to create.
type MachineToCreate struct {
	// Init is true for the first machine, which initialises the cluster.
	Init          bool
	Version       KubernetesVersion
	FailureDomain string
}

// StepKind is which step a plan takes.
type StepKind uint8

// The steps, in the contract's order.
const (
	// StepNone: the control plane is as desired.
	StepNone StepKind = iota
	// StepCreateMachine: create [Step.Create].
	StepCreateMachine
	// StepDeleteMachine: delete [Step.Machine].
	StepDeleteMachine
	// StepRemoveEtcdMember: take [Step.Machine] out of etcd, then delete its machine.
	StepRemoveEtcdMember
	// StepApplyManifests: apply [Step.Manifests] to the management cluster (hosted shape).
	StepApplyManifests
	// StepWait: something is under way; plan again after [Step.Wait]'s hint.
	StepWait
)

// Step is the single next step; Kind says which of its fields counts.
type Step struct {
	Kind      StepKind
	Create    MachineToCreate
	Machine   MachineRef
	Manifests []string
	Wait      InProgress
}

// ControlPlaneStatus is the control plane as the provider sees it.
type ControlPlaneStatus struct {
	// Initialized: the API server answered once.
	Initialized bool
	// Ready: the control plane serves requests now.
	Ready bool
	// Version it runs, when known; during an upgrade, the oldest one.
	Version *KubernetesVersion
	// Endpoint where its API server is reached, when known.
	Endpoint   *Endpoint
	Conditions []Condition
}

// PlanOutput is the plan and the counts the host shows in the Cluster's status.
type PlanOutput struct {
	Step             Step
	Status           ControlPlaneStatus
	Replicas         uint32
	ReadyReplicas    uint32
	UpToDateReplicas uint32
}
