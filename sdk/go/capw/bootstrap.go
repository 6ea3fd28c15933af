package capw

// Bootstrap is the bootstrap extension point: cluster secrets and the data that turns a
// machine into a node. A provider that implements it declares it; embed
// [UnsupportedBootstrap] to leave some of its functions unsupported.
type Bootstrap[C any] interface {
	// ClusterSecrets creates the cluster's secret material (CAs, service-account keys,
	// bootstrap token). The host stores the first ready answer and calls again only while it
	// is in progress, so slow key generation belongs behind in-progress.
	ClusterSecrets(ctx *Context[C]) (SecretsState, error)
	// Generate is the bootstrap data for one machine; pure given its input. Secret: never log
	// it.
	Generate(ctx *Context[C], request BootstrapRequest) (BootstrapData, error)
	// Kubeconfig is an admin kubeconfig (YAML) for the cluster reached at endpoint, from the
	// material ClusterSecrets returned. Secret: never log it.
	Kubeconfig(ctx *Context[C], endpoint Endpoint, secrets []SecretItem) (string, error)
}

// UnsupportedBootstrap answers unsupported to every bootstrap function; embed it and override
// the functions the provider serves.
type UnsupportedBootstrap[C any] struct{}

// ClusterSecrets answers unsupported.
func (UnsupportedBootstrap[C]) ClusterSecrets(*Context[C]) (SecretsState, error) {
	return SecretsState{}, Unsupported("bootstrap.cluster-secrets")
}

// Generate answers unsupported.
func (UnsupportedBootstrap[C]) Generate(*Context[C], BootstrapRequest) (BootstrapData, error) {
	return BootstrapData{}, Unsupported("bootstrap.generate")
}

// Kubeconfig answers unsupported.
func (UnsupportedBootstrap[C]) Kubeconfig(*Context[C], Endpoint, []SecretItem) (string, error) {
	return "", Unsupported("bootstrap.kubeconfig")
}

// SecretItem is one named piece of secret material, e.g. ca.crt. The host stores these in a
// Secret and never logs them.
type SecretItem struct {
	Name string
	Data []byte
}

// SecretsState is the answer of ClusterSecrets: ready with its items, or in progress.
type SecretsState struct {
	// Items are the material, once ready.
	Items []SecretItem
	// InProgress is set while key generation goes on; Items is then ignored.
	InProgress *InProgress
}

// SecretsReady is the cluster's material, ready.
func SecretsReady(items ...SecretItem) SecretsState {
	return SecretsState{Items: items}
}

// SecretsInProgress is material still being made.
func SecretsInProgress(p InProgress) SecretsState {
	return SecretsState{InProgress: &p}
}

// ControlPlaneMember is a member of the control plane, for joins that need the membership.
type ControlPlaneMember struct {
	// Name is the machine's name, also the etcd member name.
	Name string
	// Address is where the member is reached.
	Address string
}

// BootstrapRequest is what the host knows when it asks for a machine's bootstrap data.
type BootstrapRequest struct {
	Machine MachineRef
	Role    MachineRole
	Version KubernetesVersion
	// Endpoint is the cluster's control-plane endpoint.
	Endpoint Endpoint
	// Secrets is the material ClusterSecrets returned for this cluster.
	Secrets []SecretItem
	// ControlPlaneMembers is the current control-plane members; empty for init.
	ControlPlaneMembers []ControlPlaneMember
}

// BootstrapFormat is the format of bootstrap data.
type BootstrapFormat uint8

// The formats of bootstrap data.
const (
	FormatCloudConfig BootstrapFormat = iota
	FormatIgnition
	FormatRaw
)

// BootstrapData is a machine's bootstrap data. Secret: never log it.
type BootstrapData struct {
	Format BootstrapFormat
	Data   []byte
}
