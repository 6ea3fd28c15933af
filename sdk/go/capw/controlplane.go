package capw

import "fmt"

// ControlPlane is the control-plane extension point: the next safe step toward the desired
// control plane. The host owns the machines and applies one step at a time; the provider
// decides which step is safe. A provider that implements it declares it, with the shape and
// capabilities [ControlPlane.ControlPlaneCapabilities] answers.
//
// The machines shape answers create and delete steps, and [StepRemoveEtcdMember] for a member
// etcd still lists ([Member.Etcd] is [EtcdMember]; [RemoveMember] picks the step). The hosted
// shape answers [StepApplyManifests] with every object the control plane consists of, on
// every plan, and [PlanOutput.Certificates] with the Secrets the host mints from the
// cluster's CAs; the host tells each object's readiness back in [PlanInput.Objects]. The
// managed shape implements [ManagedControlPlane] too, and Plan answers, purely, what its
// ReconcileControlPlane would do. Embed [UnsupportedControlPlane] to leave functions
// unsupported.
type ControlPlane[C any] interface {
	// ControlPlaneCapabilities is how the provider runs control planes and what it can change;
	// the host refuses a topology the provider cannot serve before it calls anything.
	ControlPlaneCapabilities() ControlPlaneCapabilities
	// Plan is pure and deterministic for the same input: the host may call it as often as it
	// likes. It refuses (invalid-input or unsupported) a desired state it cannot reach safely.
	Plan(ctx *Context[C], input PlanInput) (PlanOutput, error)
}

// ManagedControlPlane is what a control-plane provider of the managed shape implements beside
// [ControlPlane]: the control plane is a service's, which the provider drives. The host calls
// these in its passes only, never at admission, and never for the machines or hosted shapes.
// Since contract 0.3.
//
// A provider that does not implement it answers both with a permanent unsupported, as the
// machines shape must (and as [UnsupportedControlPlane] does).
type ManagedControlPlane[C any] interface {
	// ReconcileControlPlane moves the control plane toward input (creates it, starts one step
	// of an update) and says where it stands, with how to reach and join it once it can be.
	// It may call the provider's service, and must be idempotent by ctx.IdempotencyKey(),
	// which the host keeps for the cluster: a repeated call never creates a second control
	// plane. The answer's step is [StepNone] once the control plane is as desired, [StepWait]
	// while the service works toward it; a machine step is an invalid answer.
	ReconcileControlPlane(ctx *Context[C], input PlanInput) (ReconcileOutput, error)
	// DeleteControlPlane deletes the control plane, answering [Deleted] once nothing of it
	// is left, also when there was nothing. The host calls it once the cluster's workers are
	// gone, before it deletes the infrastructure.
	DeleteControlPlane(ctx *Context[C]) (Deletion, error)
}

// UnsupportedControlPlane answers unsupported to every control-plane function; embed it and
// override the functions the provider serves (Plan always; ReconcileControlPlane and
// DeleteControlPlane for the managed shape). ControlPlaneCapabilities has no default: the
// shape is the provider's to declare.
type UnsupportedControlPlane[C any] struct{}

// Plan answers unsupported.
func (UnsupportedControlPlane[C]) Plan(*Context[C], PlanInput) (PlanOutput, error) {
	return PlanOutput{}, Unsupported("control-plane.plan")
}

// ReconcileControlPlane answers unsupported.
func (UnsupportedControlPlane[C]) ReconcileControlPlane(*Context[C], PlanInput) (ReconcileOutput, error) {
	return ReconcileOutput{}, Unsupported("control-plane.reconcile-control-plane")
}

// DeleteControlPlane answers unsupported.
func (UnsupportedControlPlane[C]) DeleteControlPlane(*Context[C]) (Deletion, error) {
	return Deletion{}, Unsupported("control-plane.delete-control-plane")
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
	// ChainsUpgrades: it takes a change of more than one minor version in one step of the
	// spec and carries it out one minor at a time (chained upgrades). Without it the host
	// refuses a skipped minor at admission, naming this capability. Since contract 0.3.
	ChainsUpgrades bool
}

// EtcdMembership is a member's place in the cluster's etcd, as the host observed it in this
// pass. Since contract 0.3.
type EtcdMembership uint8

// The places in etcd, in the contract's order.
const (
	// EtcdUnknown: the host does not observe etcd for this cluster (the class says nothing of
	// how to reach it, the host does not reach workload clusters, or etcd did not answer).
	// Plan as a 0.2 provider would; the host still takes a member out of etcd before it
	// deletes its machine wherever it can see etcd.
	EtcdUnknown EtcdMembership = iota
	// EtcdMember: etcd lists a member on this machine. It leaves through
	// [StepRemoveEtcdMember], never [StepDeleteMachine].
	EtcdMember
	// EtcdNotMember: etcd lists no member on this machine: it has not joined yet, or it has
	// left.
	EtcdNotMember
)

// String is the contract's name: unknown, member or not-member.
func (e EtcdMembership) String() string {
	switch e {
	case EtcdUnknown:
		return "unknown"
	case EtcdMember:
		return "member"
	case EtcdNotMember:
		return "not-member"
	}
	return fmt.Sprintf("etcd-membership(%d)", uint8(e))
}

// Member is an existing control-plane member as the host observes it.
type Member struct {
	Machine       MachineRef
	Version       KubernetesVersion
	FailureDomain string
	// Ready: its Node is Ready (the workload cluster's Node, where the host reaches it; the
	// machine's running phase otherwise).
	Ready bool
	// CreatedAt is seconds since the Unix epoch; it orders members oldest first.
	CreatedAt uint64
	// Deleting: being deleted already.
	Deleting bool
	// Etcd is its place in etcd. Since contract 0.3; [EtcdUnknown] from older hosts.
	Etcd EtcdMembership
	// OutOfDate says why it is out of date, one entry per input that differs from what is
	// desired now: version (it runs another version than [PlanInput.Version]), or the name of
	// a machine-shaping input as the host records it (infrastructure.config/instanceType,
	// bootstrap.provider, failureDomain). Empty when up to date. Since contract 0.3.
	OutOfDate []string
	// Unhealthy says why the host's health checks judge it unhealthy and it may be replaced
	// now; empty when healthy, not judged, or not to be replaced now. Replace such a member
	// when etcd keeps its quorum without it: take it out ([RemoveMember]), then create its
	// replacement; otherwise wait, saying why. Since contract 0.3.
	Unhealthy []string
}

// UpToDate reports whether nothing of m is out of date: what [PlanOutput.UpToDateReplicas]
// counts.
func (m Member) UpToDate() bool { return len(m.OutOfDate) == 0 }

// RemoveMember is the step that takes m out of the control plane: [StepRemoveEtcdMember]
// while etcd lists it (the host takes it out of etcd from another member, then deletes its
// machine), [StepDeleteMachine] when etcd does not, or the host cannot tell.
func RemoveMember(m Member) Step {
	if m.Etcd == EtcdMember {
		return Step{Kind: StepRemoveEtcdMember, Machine: m.Machine}
	}
	return Step{Kind: StepDeleteMachine, Machine: m.Machine}
}

// OldestVersion is the oldest version members run: what a control plane can be said to run
// while a rollout replaces its members, and so the Version of its [ControlPlaneStatus]. Nil
// without members. Pass the live ones (those not being deleted).
func OldestVersion(members []Member) *KubernetesVersion {
	var oldest *KubernetesVersion
	for _, m := range members {
		if oldest == nil || m.Version.Compare(*oldest) < 0 {
			v := m.Version
			oldest = &v
		}
	}
	return oldest
}

// HostedObject is an object the host applied to the management cluster for a hosted control
// plane, as it stands now. Since contract 0.3.
type HostedObject struct {
	// APIVersion is apps/v1 or v1.
	APIVersion string
	// Kind is Deployment, StatefulSet, Service, Secret or ConfigMap.
	Kind string
	Name string
	// Ready: a Deployment or StatefulSet's controller observed the applied generation and
	// every desired replica is updated and ready (available, for a Deployment); a Service of
	// type LoadBalancer has an address; any other Service, a Secret or a ConfigMap exists.
	Ready bool
	// Message is why it is not ready, when the host can say; "" otherwise.
	Message string
	// Images are a Deployment or StatefulSet's Pod template's container images (init
	// containers first), as applied: what it runs once Ready. Empty for other kinds.
	Images []string
	// Addresses are a LoadBalancer Service's addresses (each IP or hostname), in the order
	// given: how the control plane is reached from outside the management cluster. Empty for
	// other kinds and while none is given.
	Addresses []string
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
	// FailuresTolerated is the Cluster's ask in capabilities rather than counts: the control
	// plane is to keep serving with this many members failed; nil when it asks Replicas
	// instead (never both). Say what it means for the shape (for stacked etcd, 2N+1
	// members), or refuse it (invalid-input, naming the field) where it cannot be met. Since
	// contract 0.3.
	FailuresTolerated *uint32
	// Objects are, for the hosted shape, every object the host applied for this control plane
	// (the plan's manifests and certificate Secrets) with its readiness; empty for other
	// shapes. Since contract 0.3.
	Objects []HostedObject
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
	// StepRemoveEtcdMember: take [Step.Machine] out of etcd, then delete its machine. The
	// step for every member etcd lists ([EtcdMember]) the plan removes.
	StepRemoveEtcdMember
	// StepApplyManifests: [Step.Manifests] (YAML, one object each) are every object the
	// hosted control plane consists of now; the host applies them to the management cluster
	// and deletes what it applied before that they no longer hold. Answer it on every plan
	// while the control plane exists.
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
	// FailuresTolerated is how many members may fail with the control plane still serving,
	// as it runs now (for a managed shape, what the service promises), when known. Since
	// contract 0.3.
	FailuresTolerated *uint32
}

// PlanOutput is the plan and the counts the host shows in the Cluster's status.
type PlanOutput struct {
	Step          Step
	Status        ControlPlaneStatus
	Replicas      uint32
	ReadyReplicas uint32
	// UpToDateReplicas counts the members with nothing out of date ([Member.UpToDate]).
	UpToDateReplicas uint32
	// Certificates are, for the hosted shape beside [StepApplyManifests], the Secrets the
	// host mints from the cluster's CAs, whose keys never enter the sandbox. Each is one of
	// the plan's objects (named, pruned and owned as they are); a certificate is minted again
	// only when its request changes. Since contract 0.3.
	Certificates []CertificateSecret
	// SharedDatastore is, for the hosted shape, the etcd shared with other control planes
	// that this one keeps its state in, when it has no datastore of its own. Since contract
	// 0.3.
	SharedDatastore *SharedDatastore
}

// CertificateAuthority is the authority a certificate the host mints for a hosted control
// plane chains to: one of the cluster's CAs, which the host made and keeps. Since contract
// 0.3.
type CertificateAuthority uint8

// The cluster's certificate authorities.
const (
	// AuthorityCluster: the cluster CA (API servers, kubelets' clients, admins).
	AuthorityCluster CertificateAuthority = iota
	// AuthorityFrontProxy: the front-proxy CA (the API server's aggregation client).
	AuthorityFrontProxy
	// AuthorityEtcd: the etcd CA (etcd's serving and peer certificates, its clients).
	AuthorityEtcd
)

// CertificateUsage is what a minted certificate is for. Since contract 0.3.
type CertificateUsage uint8

// The usages of a certificate.
const (
	// UsageServer: TLS server authentication; its SANs are the names it serves.
	UsageServer CertificateUsage = iota
	// UsageClient: TLS client authentication; its common name and organizations are who it
	// is.
	UsageClient
	// UsagePeer: both, an etcd peer.
	UsagePeer
)

// CertificateRequest is one certificate (and its key) the host mints into a Secret. Since
// contract 0.3.
type CertificateRequest struct {
	// Key names the Secret's data keys, <key>.crt and <key>.key (and <key>.conf with
	// KubeconfigServer). A DNS label.
	Key           string
	Authority     CertificateAuthority
	Usage         CertificateUsage
	CommonName    string
	Organizations []string
	// SANs are DNS names and IP addresses, for [UsageServer] and [UsagePeer].
	SANs []string
	// KubeconfigServer, when not "", has the host also write <key>.conf: a kubeconfig for
	// this server URL that authenticates with this (client) certificate and trusts the
	// cluster CA.
	KubeconfigServer string
}

// SecretMaterial is material of the cluster's CAs the host writes into a Secret it mints.
// Since contract 0.3.
type SecretMaterial uint8

// The materials, in the contract's order.
const (
	// MaterialClusterCACertificate: ca.crt, the cluster CA's certificate.
	MaterialClusterCACertificate SecretMaterial = iota
	// MaterialClusterCA: ca.crt and ca.key, the cluster CA with its key, for
	// kube-controller-manager's certificate signer. The key goes to the management cluster's
	// Secret, never to a sandbox.
	MaterialClusterCA
	// MaterialFrontProxyCACertificate: front-proxy-ca.crt.
	MaterialFrontProxyCACertificate
	// MaterialEtcdCACertificate: etcd-ca.crt.
	MaterialEtcdCACertificate
	// MaterialServiceAccountKeys: sa.key and sa.pub, the key pair service-account tokens are
	// signed with.
	MaterialServiceAccountKeys
)

// CertificateSecret is a Secret the host mints from the cluster's CAs and writes to the
// management cluster for a hosted control plane: the provider names what goes in, the host
// holds the CA keys. Since contract 0.3.
type CertificateSecret struct {
	// Name is the Secret's: the Cluster's name and a dash first, as for every object of a
	// hosted plan.
	Name         string
	Certificates []CertificateRequest
	Materials    []SecretMaterial
}

// SharedDatastore is a hosted control plane's place in an etcd shared by several control
// planes, which the management cluster's operator runs. The host makes an etcd user and role
// for this cluster with access to the cluster's key prefix alone, mints the user's client
// certificate, and writes into the Secret named Secret what the API servers need: endpoints
// (comma-separated URLs, for --etcd-servers), prefix (for --etcd-prefix), ca.crt, client.crt
// and client.key. The prefix and the user are the host's choice. Since contract 0.3.
type SharedDatastore struct {
	// Name is the datastore: the Secret of that name and of type capw.dev/datastore in the
	// host's provider namespace.
	Name string
	// Secret is the Secret the host writes: one of the plan's objects (the Cluster's name and
	// a dash first), owned, pruned and deleted as they are.
	Secret string
}

// ControlPlaneAccess is how a control plane that a service runs is reached and joined, as
// the service hands it out. Since contract 0.3.
type ControlPlaneAccess struct {
	// Endpoint is where its API server is reached.
	Endpoint Endpoint
	// CACertificate is the certificate authority its API server's certificate chains to
	// (PEM): what kubeconfigs trust and joins pin.
	CACertificate string
	// AdminKubeconfig is an admin kubeconfig (YAML), which the host stores in the cluster's
	// kubeconfig Secret. Secret: never log it.
	AdminKubeconfig string
	// JoinToken is the token workers join with, issued and kept valid by the service; nil
	// when joins need none. The host passes it to the bootstrap provider
	// ([BootstrapRequest.Join]).
	JoinToken *JoinToken
}

// ReconcileOutput is the answer of [ManagedControlPlane.ReconcileControlPlane]. Since
// contract 0.3.
type ReconcileOutput struct {
	// Plan's step is [StepNone] once the control plane is as desired and [StepWait] while the
	// service works toward it.
	Plan PlanOutput
	// Access is how to reach and join it, once it can be; nil before.
	Access *ControlPlaneAccess
}
