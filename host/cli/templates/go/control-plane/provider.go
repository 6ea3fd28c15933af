// Command {{name}} is a control-plane provider written with capw's Go SDK, of the machines
// shape: the host creates and deletes the control-plane machines, one step at a time, and Plan
// says which step is safe next, taking a member etcd lists out of etcd before its machine.
// Scalable, no version upgrades (set VersionUpgrades and plan a
// rollout to add them: kubeadm-control-plane in the capw repository shows how).
//
// provider.go is the provider; main.go exports it from the component.
package main

import (
	"cmp"
	_ "embed"
	"fmt"
	"slices"
	"strings"
	"time"

	"capw.dev/sdk/go/capw"
)

// Config is the provider's config, as a ClusterClass gives it.
type Config struct {
	// MaxReplicas is the most control-plane machines a cluster may ask for: odd, 1 to 9.
	MaxReplicas uint32 `json:"maxReplicas"`
}

// configSchema is Config's JSON Schema, with the same defaults as SetDefaults. The host checks
// every config against it before any call.
//
//go:embed config-schema.json
var configSchema string

// SetDefaults sets the fields a config leaves out, before the config is read over them.
func (c *Config) SetDefaults() {
	c.MaxReplicas = 7
}

// Validate is what the schema cannot say; validate-config reports each problem at its field's
// JSON Pointer.
func (c Config) Validate() []capw.FieldError {
	if c.MaxReplicas%2 == 0 {
		return []capw.FieldError{{Path: "/maxReplicas", Message: "must be odd, so that etcd keeps a quorum"}}
	}
	return nil
}

// wait is how soon to plan again while a machine comes up or goes away.
const wait = 5 * time.Second

// Provider is the provider. Stateless: the host calls each function in a fresh instance.
type Provider struct{}

// Describe says who the provider is. It implements capw.ControlPlane, so that is the one
// extension point it declares; the others answer unsupported.
func (Provider) Describe() capw.Description {
	return capw.Description{
		Name:         "{{name}}",
		Version:      "0.1.0",
		Description:  "Control-plane provider: machines, one at a time, scaled up and down.",
		ConfigSchema: configSchema,
	}
}

// ControlPlaneCapabilities: machines of the cluster, scalable, no version upgrades.
func (Provider) ControlPlaneCapabilities() capw.ControlPlaneCapabilities {
	return capw.ControlPlaneCapabilities{Shape: capw.ShapeMachines, Scalable: true, VersionUpgrades: false}
}

// Plan is the next safe step toward input.Replicas machines (at most MaxReplicas), and the
// status the host shows. Pure: the same input gives the same plan.
func (Provider) Plan(ctx *capw.Context[Config], input capw.PlanInput) (capw.PlanOutput, error) {
	// The live members are those not being deleted.
	var live []capw.Member
	ready := 0
	for _, m := range input.Members {
		if !m.Deleting {
			live = append(live, m)
			if m.Ready {
				ready++
			}
		}
	}
	wanted := int(min(input.Replicas, ctx.Config.MaxReplicas))

	var step capw.Step
	if going := slices.IndexFunc(input.Members, func(m capw.Member) bool { return m.Deleting }); going >= 0 {
		// One change at a time: nothing else until the machine is gone.
		step = waitStep("MachineDeleting", fmt.Sprintf("machine %s is being deleted", input.Members[going].Machine.Name))
	} else if len(live) < wanted {
		if ready < len(live) {
			step = waitStep("MachineNotReady", fmt.Sprintf("%d of %d machines ready", ready, len(live)))
		} else {
			create := capw.MachineToCreate{Init: len(live) == 0, Version: input.Version}
			if domains := input.FailureDomains; len(domains) > 0 {
				create.FailureDomain = domains[len(live)%len(domains)] // round robin
			}
			step = capw.Step{Kind: capw.StepCreateMachine, Create: create}
		}
	} else if len(live) > wanted {
		// The oldest goes first. While etcd lists it, it leaves etcd first (remove-etcd-member:
		// the host takes it out from another member, then deletes its machine), so that a
		// quorum never counts a member whose machine is gone; otherwise its machine is deleted.
		oldest := slices.MinFunc(live, func(a, b capw.Member) int {
			return cmp.Or(cmp.Compare(a.CreatedAt, b.CreatedAt), strings.Compare(a.Machine.Name, b.Machine.Name))
		})
		step = capw.RemoveMember(oldest)
	} else {
		step = capw.Step{Kind: capw.StepNone}
	}

	status := capw.ControlPlaneStatus{
		Initialized: slices.ContainsFunc(input.Members, func(m capw.Member) bool { return m.Ready }),
		Ready:       len(live) > 0 && ready == len(live),
		Endpoint:    input.Endpoint,
	}
	if len(input.Members) > 0 {
		status.Version = &input.Version
	}
	upToDate := 0
	for _, m := range live {
		if m.UpToDate() {
			upToDate++
		}
	}
	return capw.PlanOutput{
		Step:             step,
		Status:           status,
		Replicas:         uint32(len(live)),
		ReadyReplicas:    uint32(ready),
		UpToDateReplicas: uint32(upToDate),
	}, nil
}

// waitStep is a step that waits and plans again after wait.
func waitStep(reason, message string) capw.Step {
	return capw.Step{Kind: capw.StepWait, Wait: capw.NewInProgress(reason, message).After(wait)}
}

// The machines shape serves Plan only: the host runs the machines. A control plane a service
// runs (the managed shape) would implement capw.ManagedControlPlane too, whose
// ReconcileControlPlane and DeleteControlPlane drive the service; without it, both answer a
// permanent unsupported, as this shape must.

// The compiler checks that Provider serves the control-plane point.
var _ capw.ControlPlane[Config] = Provider{}
