// Package dispatch holds the exported provider as a table of plain functions, so that the
// contract's export glue (which cannot be generic over the config type) reaches the typed
// methods: each entry parses the call's config, builds the [capw.Context] and calls the method.
package dispatch

import (
	"capw.dev/sdk/go/capw"
)

// Metadata is what metadata.describe answers.
type Metadata struct {
	capw.Description
	Points []capw.ExtensionPoint
	// ControlPlane is the control plane's capabilities; nil unless the point is declared.
	ControlPlane *capw.ControlPlaneCapabilities
}

// Table is a provider's functions, config type erased. A nil point table means the provider
// does not declare that point.
type Table struct {
	Describe       func() Metadata
	ValidateConfig func(config string) []capw.FieldError
	Infrastructure *Infrastructure
	Bootstrap      *Bootstrap
	ControlPlane   *ControlPlane
	LifecycleHooks *LifecycleHooks
}

// ControlPlane is the control-plane point's functions. ReconcileControlPlane and
// DeleteControlPlane answer unsupported unless the provider implements
// [capw.ManagedControlPlane].
type ControlPlane struct {
	Plan                  func(capw.CallSource, capw.PlanInput) (capw.PlanOutput, error)
	ReconcileControlPlane func(capw.CallSource, capw.PlanInput) (capw.ReconcileOutput, error)
	DeleteControlPlane    func(capw.CallSource) (capw.Deletion, error)
}

// Infrastructure is the infrastructure point's functions.
type Infrastructure struct {
	ReconcileCluster func(capw.CallSource) (capw.ClusterState, error)
	DeleteCluster    func(capw.CallSource) (capw.Deletion, error)
	ReconcileMachine func(capw.CallSource, capw.MachineSpec) (capw.MachineStatus, error)
	DeleteMachine    func(capw.CallSource, capw.MachineRef) (capw.Deletion, error)
	ListMachines     func(capw.CallSource) ([]capw.ListedMachine, error)
}

// Bootstrap is the bootstrap point's functions. CurrentJoinToken answers nil and
// RenewJoinToken unsupported unless the provider implements [capw.JoinTokens].
type Bootstrap struct {
	ClusterSecrets   func(capw.CallSource) (capw.SecretsState, error)
	Generate         func(capw.CallSource, capw.BootstrapRequest) (capw.BootstrapData, error)
	Kubeconfig       func(capw.CallSource, capw.Endpoint, []capw.SecretItem) (string, error)
	CurrentJoinToken func(capw.CallSource, []capw.SecretItem) (*capw.JoinToken, error)
	RenewJoinToken   func(capw.CallSource, []capw.SecretItem) (capw.JoinToken, error)
}

// LifecycleHooks is the lifecycle-hooks point's function.
type LifecycleHooks struct {
	Handle func(capw.CallSource, capw.HookRequest) (capw.HookResponse, error)
}

// Current is the exported provider; nil until package export registers one.
var Current *Table

// enter parses the call's config: a config that does not parse is a permanent invalid-input.
func enter[C any](source capw.CallSource) (*capw.Context[C], error) {
	config, err := capw.ParseConfig[C](source.Config())
	if err != nil {
		return nil, err
	}
	return capw.NewContext(source, config), nil
}

// Build is p's table.
func Build[C any](p capw.Provider[C]) *Table {
	t := &Table{
		Describe: func() Metadata {
			m := Metadata{Description: p.Describe(), Points: capw.Points[C](p)}
			if cp, ok := p.(capw.ControlPlane[C]); ok {
				capabilities := cp.ControlPlaneCapabilities()
				m.ControlPlane = &capabilities
			}
			return m
		},
		ValidateConfig: func(config string) []capw.FieldError {
			return capw.CheckConfig[C](p.Describe().ConfigSchema, config)
		},
	}
	if infra, ok := p.(capw.Infrastructure[C]); ok {
		t.Infrastructure = infrastructure(infra)
	}
	if boot, ok := p.(capw.Bootstrap[C]); ok {
		t.Bootstrap = bootstrap(boot)
	}
	if cp, ok := p.(capw.ControlPlane[C]); ok {
		t.ControlPlane = controlPlane(cp)
	}
	if hooks, ok := p.(capw.LifecycleHooks[C]); ok {
		t.LifecycleHooks = &LifecycleHooks{
			Handle: func(s capw.CallSource, r capw.HookRequest) (capw.HookResponse, error) {
				ctx, err := enter[C](s)
				if err != nil {
					return capw.HookResponse{}, err
				}
				return hooks.Handle(ctx, r)
			},
		}
	}
	return t
}

func infrastructure[C any](p capw.Infrastructure[C]) *Infrastructure {
	return &Infrastructure{
		ReconcileCluster: func(s capw.CallSource) (capw.ClusterState, error) {
			ctx, err := enter[C](s)
			if err != nil {
				return capw.ClusterState{}, err
			}
			return p.ReconcileCluster(ctx)
		},
		DeleteCluster: func(s capw.CallSource) (capw.Deletion, error) {
			ctx, err := enter[C](s)
			if err != nil {
				return capw.Deletion{}, err
			}
			return p.DeleteCluster(ctx)
		},
		ReconcileMachine: func(s capw.CallSource, spec capw.MachineSpec) (capw.MachineStatus, error) {
			ctx, err := enter[C](s)
			if err != nil {
				return capw.MachineStatus{}, err
			}
			return p.ReconcileMachine(ctx, spec)
		},
		DeleteMachine: func(s capw.CallSource, m capw.MachineRef) (capw.Deletion, error) {
			ctx, err := enter[C](s)
			if err != nil {
				return capw.Deletion{}, err
			}
			return p.DeleteMachine(ctx, m)
		},
		ListMachines: func(s capw.CallSource) ([]capw.ListedMachine, error) {
			ctx, err := enter[C](s)
			if err != nil {
				return nil, err
			}
			return p.ListMachines(ctx)
		},
	}
}

func controlPlane[C any](p capw.ControlPlane[C]) *ControlPlane {
	var managed capw.ManagedControlPlane[C] = capw.UnsupportedControlPlane[C]{}
	if m, ok := p.(capw.ManagedControlPlane[C]); ok {
		managed = m
	}
	return &ControlPlane{
		Plan: func(s capw.CallSource, in capw.PlanInput) (capw.PlanOutput, error) {
			ctx, err := enter[C](s)
			if err != nil {
				return capw.PlanOutput{}, err
			}
			return p.Plan(ctx, in)
		},
		ReconcileControlPlane: func(s capw.CallSource, in capw.PlanInput) (capw.ReconcileOutput, error) {
			ctx, err := enter[C](s)
			if err != nil {
				return capw.ReconcileOutput{}, err
			}
			return managed.ReconcileControlPlane(ctx, in)
		},
		DeleteControlPlane: func(s capw.CallSource) (capw.Deletion, error) {
			ctx, err := enter[C](s)
			if err != nil {
				return capw.Deletion{}, err
			}
			return managed.DeleteControlPlane(ctx)
		},
	}
}

func bootstrap[C any](p capw.Bootstrap[C]) *Bootstrap {
	var tokens capw.JoinTokens[C] = capw.UnsupportedBootstrap[C]{}
	if t, ok := p.(capw.JoinTokens[C]); ok {
		tokens = t
	}
	return &Bootstrap{
		ClusterSecrets: func(s capw.CallSource) (capw.SecretsState, error) {
			ctx, err := enter[C](s)
			if err != nil {
				return capw.SecretsState{}, err
			}
			return p.ClusterSecrets(ctx)
		},
		Generate: func(s capw.CallSource, r capw.BootstrapRequest) (capw.BootstrapData, error) {
			ctx, err := enter[C](s)
			if err != nil {
				return capw.BootstrapData{}, err
			}
			return p.Generate(ctx, r)
		},
		Kubeconfig: func(s capw.CallSource, e capw.Endpoint, items []capw.SecretItem) (string, error) {
			ctx, err := enter[C](s)
			if err != nil {
				return "", err
			}
			return p.Kubeconfig(ctx, e, items)
		},
		CurrentJoinToken: func(s capw.CallSource, items []capw.SecretItem) (*capw.JoinToken, error) {
			ctx, err := enter[C](s)
			if err != nil {
				return nil, err
			}
			return tokens.CurrentJoinToken(ctx, items)
		},
		RenewJoinToken: func(s capw.CallSource, items []capw.SecretItem) (capw.JoinToken, error) {
			ctx, err := enter[C](s)
			if err != nil {
				return capw.JoinToken{}, err
			}
			return tokens.RenewJoinToken(ctx, items)
		},
	}
}
