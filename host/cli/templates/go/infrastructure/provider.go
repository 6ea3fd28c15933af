// Command {{name}} is an infrastructure provider written with capw's Go SDK. It is stateless:
// every machine "exists" where the call says, with a provider id made from the call's
// idempotency key, and the control-plane endpoint is a name under the configured domain. A
// real provider calls its cloud's API over the HTTP client the host grants (see
// plugins/other-languages/go-sim-infra in the capw repository) and keeps nothing in the
// sandbox either: the cloud holds the state.
//
// provider.go is the provider; main.go exports it from the component.
package main

import (
	_ "embed"
	"strconv"
	"strings"

	"capw.dev/sdk/go/capw"
)

// Config is the provider's config, as a ClusterClass gives it.
type Config struct {
	// Domain is the DNS domain the control-plane endpoint is named under.
	Domain string `json:"domain"`
	// FailureDomains are the failure domains machines are spread over.
	FailureDomains []string `json:"failureDomains"`
}

// configSchema is Config's JSON Schema, with the same defaults as SetDefaults. The host checks
// every config against it before any call.
//
//go:embed config-schema.json
var configSchema string

// SetDefaults sets the fields a config leaves out, before the config is read over them.
func (c *Config) SetDefaults() {
	c.Domain = "example.test"
	c.FailureDomains = []string{"zone-a"}
}

// Validate is what the schema cannot say; validate-config reports each problem at its field's
// JSON Pointer.
func (c Config) Validate() []capw.FieldError {
	var errors []capw.FieldError
	if !isDNSName(c.Domain) {
		errors = append(errors, capw.FieldError{Path: "/domain", Message: "must be a DNS name such as example.test"})
	}
	if len(c.FailureDomains) == 0 {
		errors = append(errors, capw.FieldError{Path: "/failureDomains", Message: "must name at least one"})
	}
	for i, domain := range c.FailureDomains {
		if strings.Contains(domain, ".") || !isDNSName(domain) {
			errors = append(errors, capw.FieldError{
				Path:    capw.JSONPointer("failureDomains", strconv.Itoa(i)),
				Message: "must be a DNS label such as zone-a",
			})
		}
	}
	return errors
}

// isDNSName reports whether name is a DNS label, or labels joined by dots: a-z, 0-9 and '-',
// neither first nor last.
func isDNSName(name string) bool {
	if name == "" || len(name) > 253 {
		return false
	}
	for _, label := range strings.Split(name, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, r := range label {
			if (r < 'a' || r > 'z') && (r < '0' || r > '9') && r != '-' {
				return false
			}
		}
	}
	return true
}

// Provider is the provider. Stateless: the host calls each function in a fresh instance.
type Provider struct{}

// Describe says who the provider is. It implements capw.Infrastructure, so that is the one
// extension point it declares; the others answer unsupported.
func (Provider) Describe() capw.Description {
	return capw.Description{
		Name:         "{{name}}",
		Version:      "0.1.0",
		Description:  "Infrastructure provider: stateless machines named by their idempotency key.",
		ConfigSchema: configSchema,
	}
}

// ReconcileCluster is ready at once: the endpoint is <cluster>.<domain>:6443, and every
// configured failure domain may hold control-plane machines. (Infrastructure for a control
// plane a service runs, the hosted and managed shapes, makes no endpoint: it answers a nil
// ControlPlaneEndpoint, and the control-plane provider reports the service's.)
func (Provider) ReconcileCluster(ctx *capw.Context[Config]) (capw.ClusterState, error) {
	domains := make([]capw.FailureDomain, 0, len(ctx.Config.FailureDomains))
	for _, name := range ctx.Config.FailureDomains {
		domains = append(domains, capw.FailureDomain{Name: name, ControlPlane: true})
	}
	return capw.ClusterReady(capw.ClusterInfrastructure{
		ControlPlaneEndpoint: &capw.Endpoint{Host: ctx.Cluster().Name + "." + ctx.Config.Domain, Port: 6443},
		FailureDomains:       domains,
	}), nil
}

// DeleteCluster has nothing to delete.
func (Provider) DeleteCluster(*capw.Context[Config]) (capw.Deletion, error) {
	return capw.Deleted, nil
}

// ReconcileMachine reports the machine running where the host placed it.
func (Provider) ReconcileMachine(ctx *capw.Context[Config], spec capw.MachineSpec) (capw.MachineStatus, error) {
	return capw.MachineStatus{
		// The same key on every call for one machine: the same machine, never a second.
		ProviderID:    "static://" + ctx.IdempotencyKey(),
		Phase:         capw.PhaseRunning,
		Addresses:     []capw.Address{{Kind: capw.AddressHostname, Address: spec.Machine.Name}},
		FailureDomain: spec.FailureDomain,
	}, nil
}

// DeleteMachine has nothing to delete.
func (Provider) DeleteMachine(*capw.Context[Config], capw.MachineRef) (capw.Deletion, error) {
	return capw.Deleted, nil
}

// ListMachines lists nothing, since nothing is kept anywhere. A real provider lists every
// machine its cloud holds for the cluster, so that the host deletes those it has no Machine
// for (see plugins/other-languages/go-sim-infra).
func (Provider) ListMachines(*capw.Context[Config]) ([]capw.ListedMachine, error) {
	return nil, nil
}

// The compiler checks that Provider serves the infrastructure point, all of it.
var _ capw.Infrastructure[Config] = Provider{}
