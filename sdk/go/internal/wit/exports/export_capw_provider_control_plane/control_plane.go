// Package export_capw_provider_control_plane is the export glue of
// `capw:provider/control-plane`: it converts the contract's types to the SDK's and calls the
// provider's [capw.ControlPlane] Plan, or answers unsupported when the provider does not
// implement the point.
package export_capw_provider_control_plane

import (
	"capw.dev/sdk/go/capw"
	"capw.dev/sdk/go/internal/conv"
	"capw.dev/sdk/go/internal/dispatch"
	cp "capw.dev/sdk/go/internal/wit/imports/capw_provider_control_plane"
	"capw.dev/sdk/go/internal/wit/imports/capw_provider_types"
	witTypes "go.bytecodealliance.org/pkg/wit/types"
)

type providerError = capw_provider_types.ProviderError

// Plan calls the provider's Plan.
func Plan(ctx *capw_provider_types.CallContext, input cp.PlanInput) witTypes.Result[cp.PlanOutput, providerError] {
	// The call lends its context: the borrow ends when the call does, and its handle
	// must be dropped before the function returns.
	defer ctx.Drop()
	p := dispatch.Current.ControlPlane
	if p == nil {
		return witTypes.Err[cp.PlanOutput](conv.Unsupported("control-plane.plan"))
	}
	in := capw.PlanInput{
		Version:        conv.FromVersion(input.Version),
		Replicas:       input.Replicas,
		FailureDomains: input.FailureDomains,
	}
	for _, m := range input.Members {
		in.Members = append(in.Members, capw.Member{
			Machine:       conv.FromMachineRef(m.Machine),
			Version:       conv.FromVersion(m.Version),
			FailureDomain: conv.FromOptionalString(m.FailureDomain),
			Ready:         m.Ready,
			CreatedAt:     m.CreatedAt,
			Deleting:      m.Deleting,
		})
	}
	if input.Endpoint.IsSome() {
		e := conv.FromEndpoint(input.Endpoint.Some())
		in.Endpoint = &e
	}
	out, err := p.Plan(conv.CallSource{Ctx: ctx}, in)
	if err != nil {
		return witTypes.Err[cp.PlanOutput](conv.Error(err))
	}
	step, ok := toStep(out.Step)
	if !ok {
		return witTypes.Err[cp.PlanOutput](conv.Internal("plan answered a step of no known kind"))
	}
	status := cp.ControlPlaneStatus{
		Initialized: out.Status.Initialized,
		Ready:       out.Status.Ready,
		Version:     witTypes.None[capw_provider_types.KubernetesVersion](),
		Endpoint:    witTypes.None[capw_provider_types.Endpoint](),
		Conditions:  conv.Conditions(out.Status.Conditions),
	}
	if v := out.Status.Version; v != nil {
		status.Version = witTypes.Some(capw_provider_types.KubernetesVersion{Major: v.Major, Minor: v.Minor, Patch: v.Patch})
	}
	if e := out.Status.Endpoint; e != nil {
		status.Endpoint = witTypes.Some(conv.Endpoint(*e))
	}
	return witTypes.Ok[cp.PlanOutput, providerError](cp.PlanOutput{
		Step:             step,
		Status:           status,
		Replicas:         out.Replicas,
		ReadyReplicas:    out.ReadyReplicas,
		UpToDateReplicas: out.UpToDateReplicas,
	})
}

func machineRef(m capw.MachineRef) capw_provider_types.MachineRef {
	return capw_provider_types.MachineRef{Name: m.Name, Uid: m.UID}
}

func toStep(s capw.Step) (cp.Step, bool) {
	switch s.Kind {
	case capw.StepNone:
		return cp.MakeStepNone(), true
	case capw.StepCreateMachine:
		v := s.Create.Version
		return cp.MakeStepCreateMachine(cp.MachineToCreate{
			Init:          s.Create.Init,
			Version:       capw_provider_types.KubernetesVersion{Major: v.Major, Minor: v.Minor, Patch: v.Patch},
			FailureDomain: conv.OptionalString(s.Create.FailureDomain),
		}), true
	case capw.StepDeleteMachine:
		return cp.MakeStepDeleteMachine(machineRef(s.Machine)), true
	case capw.StepRemoveEtcdMember:
		return cp.MakeStepRemoveEtcdMember(machineRef(s.Machine)), true
	case capw.StepApplyManifests:
		manifests := s.Manifests
		if manifests == nil {
			manifests = []string{}
		}
		return cp.MakeStepApplyManifests(manifests), true
	case capw.StepWait:
		return cp.MakeStepWait(conv.InProgress(s.Wait)), true
	}
	return cp.Step{}, false
}
