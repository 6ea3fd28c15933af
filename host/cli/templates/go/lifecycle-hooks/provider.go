// Command {{name}} is a lifecycle-hooks provider written with capw's Go SDK: deletion
// protection. Every transition proceeds, except a cluster's deletion while the ClusterClass's
// config says protectFromDelete: true; the host holds only that cluster's deletion and asks
// again.
//
// provider.go is the provider; main.go exports it from the component.
package main

import (
	_ "embed"
	"time"

	"capw.dev/sdk/go/capw"
)

// Config is the provider's config, as a ClusterClass gives it. The schema is its one rule:
// protectFromDelete must be a boolean, or validate-config refuses it at /protectFromDelete.
type Config struct {
	// ProtectFromDelete holds every deletion of the class's clusters. Left out, it is false.
	ProtectFromDelete bool `json:"protectFromDelete"`
}

// configSchema is Config's JSON Schema. The host checks every config against it before any
// call.
//
//go:embed config-schema.json
var configSchema string

// recheck is how soon the host asks again about a held deletion.
const recheck = 60 * time.Second

// Provider is the provider. Stateless: the host calls each function in a fresh instance.
type Provider struct{}

// Describe says who the provider is. It implements capw.LifecycleHooks, so that is the one
// extension point it declares; the others answer unsupported.
func (Provider) Describe() capw.Description {
	return capw.Description{
		Name:         "{{name}}",
		Version:      "0.1.0",
		Description:  "Lifecycle hooks: holds the deletion of protected clusters.",
		ConfigSchema: configSchema,
	}
}

// Handle lets every transition proceed but the deletion of a protected cluster.
func (Provider) Handle(ctx *capw.Context[Config], request capw.HookRequest) (capw.HookResponse, error) {
	if request.Hook == capw.BeforeClusterDelete && ctx.Config.ProtectFromDelete {
		return capw.HoldFor(capw.NewInProgress(
			"DeletionProtected",
			"set protectFromDelete to false in the ClusterClass to delete this cluster",
		).After(recheck)), nil
	}
	return capw.Proceed, nil
}

// The compiler checks that Provider serves the lifecycle-hooks point.
var _ capw.LifecycleHooks[Config] = Provider{}
