package capw

// Bootstrap is the bootstrap extension point: cluster secrets and the data that turns a
// machine into a node. A provider that implements it declares it; embed
// [UnsupportedBootstrap] to leave some of its functions unsupported. A provider whose join
// data carries a bootstrap token the host is to keep valid implements [JoinTokens] too.
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

// CurrentJoinToken answers nil: the provider's join data carries no token for the host to
// keep valid.
func (UnsupportedBootstrap[C]) CurrentJoinToken(*Context[C], []SecretItem) (*JoinToken, error) {
	return nil, nil
}

// RenewJoinToken answers unsupported.
func (UnsupportedBootstrap[C]) RenewJoinToken(*Context[C], []SecretItem) (JoinToken, error) {
	return JoinToken{}, Unsupported("bootstrap.renew-join-token")
}

// JoinTokens is what a bootstrap provider whose join data carries a bootstrap token
// implements beside [Bootstrap], so that the host keeps that token valid in the workload
// cluster: it asks CurrentJoinToken which token joins carry now and, when that token is
// missing there or past half its life, asks RenewJoinToken for a fresh one, writes it into
// the workload cluster and then stores it in the cluster's secrets, where Generate reads it.
// Since contract 0.3.
//
// A provider that does not implement it answers as [UnsupportedBootstrap] does:
// current-join-token nil (no token to keep), renew-join-token unsupported. Implement both
// methods or neither: a token the host is told of and cannot renew expires.
type JoinTokens[C any] interface {
	// CurrentJoinToken is the token joins carry now, read from the material ClusterSecrets
	// returned; nil when the join data carries none. Pure.
	CurrentJoinToken(ctx *Context[C], secrets []SecretItem) (*JoinToken, error)
	// RenewJoinToken is a fresh token, with a new ID, in the item CurrentJoinToken names.
	// Its Secret is secret: never log it.
	RenewJoinToken(ctx *Context[C], secrets []SecretItem) (JoinToken, error)
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
	// Secrets is the material ClusterSecrets returned for this cluster; empty when Join is
	// set (the host does not call ClusterSecrets for a cluster whose CAs are a service's).
	Secrets []SecretItem
	// ControlPlaneMembers is the current control-plane members; empty for init.
	ControlPlaneMembers []ControlPlaneMember
	// Join is how a worker joins a control plane a service runs (the hosted and managed
	// shapes), as the control-plane provider had it from the service; nil for the machines
	// shape, whose joins come from Secrets. Since contract 0.3.
	Join *JoinCredentials
}

// JoinCredentials is how to join a control plane that a service runs. Since contract 0.3.
type JoinCredentials struct {
	// CACertificate is the certificate authority the control plane's API server certificate
	// chains to (PEM): what a join pins (kubeadm's caCertHashes).
	CACertificate string
	// Token is the token a join authenticates with, issued and kept valid by the service; nil
	// when the service needs none.
	Token *JoinToken
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
