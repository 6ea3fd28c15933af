package capw

// Description is who a provider is; the SDK builds metadata.describe from it and from the
// extension points the provider implements.
type Description struct {
	// Name is short and lowercase, e.g. go-sim-infra.
	Name string
	// Version is the provider's own semantic version, e.g. 0.1.0.
	Version string
	// Description is one line for humans.
	Description string
	// ConfigSchema is the JSON Schema (draft 2020-12) of the config, as a JSON document. The
	// host checks every config against it; so does validate-config.
	ConfigSchema string
	// RequestedGrants is what the provider asks the operator to grant. The operator decides;
	// the host enforces the grants, never this list.
	RequestedGrants RequestedGrants
}

// RequestedGrants is what a provider asks the operator to grant.
type RequestedGrants struct {
	// HTTPHosts are the authorities (host or host:port) the provider wants to reach.
	HTTPHosts []string
	// Secrets are the names of the secrets it reads with [Secret].
	Secrets []string
}

// Provider is what every provider implements. C is its config type: every call's config is
// parsed into it ([ParseConfig]) and validate-config checks it ([CheckConfig]).
//
// Providers are stateless: the host calls each function in a fresh instance, so nothing kept
// between calls survives. Keep the provider type empty, or holding constants.
type Provider[C any] interface {
	Describe() Description
}

// ExtensionPoint is an extension point of the host a provider can implement.
type ExtensionPoint uint8

// The extension points, in the contract's order.
const (
	PointInfrastructure ExtensionPoint = iota
	PointBootstrap
	PointControlPlane
	PointLifecycleHooks
)

// String is the contract's name, e.g. lifecycle-hooks.
func (p ExtensionPoint) String() string {
	switch p {
	case PointInfrastructure:
		return "infrastructure"
	case PointBootstrap:
		return "bootstrap"
	case PointControlPlane:
		return "control-plane"
	case PointLifecycleHooks:
		return "lifecycle-hooks"
	}
	return "extension-point"
}

// Points is the extension points p declares: those whose interface it implements, in the
// contract's order.
func Points[C any](p Provider[C]) []ExtensionPoint {
	var out []ExtensionPoint
	if _, ok := p.(Infrastructure[C]); ok {
		out = append(out, PointInfrastructure)
	}
	if _, ok := p.(Bootstrap[C]); ok {
		out = append(out, PointBootstrap)
	}
	if _, ok := p.(ControlPlane[C]); ok {
		out = append(out, PointControlPlane)
	}
	if _, ok := p.(LifecycleHooks[C]); ok {
		out = append(out, PointLifecycleHooks)
	}
	return out
}
