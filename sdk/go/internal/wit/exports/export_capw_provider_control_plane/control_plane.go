// Package export_capw_provider_control_plane is the export glue of
// `capw:provider/control-plane`: it converts the contract's types to the SDK's and calls the
// provider's [capw.ControlPlane] Plan (and, for the managed shape, its
// [capw.ManagedControlPlane] functions), or answers unsupported when the provider does not
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

type (
	providerError = capw_provider_types.ProviderError
	deletion      = capw_provider_types.Deletion
)

// Plan calls the provider's Plan.
func Plan(ctx *capw_provider_types.CallContext, input cp.PlanInput) witTypes.Result[cp.PlanOutput, providerError] {
	// The call lends its context: the borrow ends when the call does, and its handle
	// must be dropped before the function returns.
	defer ctx.Drop()
	p := dispatch.Current.ControlPlane
	if p == nil {
		return witTypes.Err[cp.PlanOutput](conv.Unsupported("control-plane.plan"))
	}
	out, err := p.Plan(conv.CallSource{Ctx: ctx}, fromPlanInput(input))
	if err != nil {
		return witTypes.Err[cp.PlanOutput](conv.Error(err))
	}
	plan, problem := toPlanOutput(out)
	if problem != "" {
		return witTypes.Err[cp.PlanOutput](conv.Internal("plan " + problem))
	}
	return witTypes.Ok[cp.PlanOutput, providerError](plan)
}

// ReconcileControlPlane calls the provider's ReconcileControlPlane; unsupported when it does
// not implement [capw.ManagedControlPlane].
func ReconcileControlPlane(ctx *capw_provider_types.CallContext, input cp.PlanInput) witTypes.Result[cp.ReconcileOutput, providerError] {
	// The call lends its context: the borrow ends when the call does, and its handle
	// must be dropped before the function returns.
	defer ctx.Drop()
	p := dispatch.Current.ControlPlane
	if p == nil {
		return witTypes.Err[cp.ReconcileOutput](conv.Unsupported("control-plane.reconcile-control-plane"))
	}
	out, err := p.ReconcileControlPlane(conv.CallSource{Ctx: ctx}, fromPlanInput(input))
	if err != nil {
		return witTypes.Err[cp.ReconcileOutput](conv.Error(err))
	}
	plan, problem := toPlanOutput(out.Plan)
	if problem != "" {
		return witTypes.Err[cp.ReconcileOutput](conv.Internal("reconcile-control-plane " + problem))
	}
	access := witTypes.None[cp.ControlPlaneAccess]()
	if a := out.Access; a != nil {
		access = witTypes.Some(cp.ControlPlaneAccess{
			Endpoint:        conv.Endpoint(a.Endpoint),
			CaCertificate:   a.CACertificate,
			AdminKubeconfig: a.AdminKubeconfig,
			JoinToken:       conv.OptionalJoinToken(a.JoinToken),
		})
	}
	return witTypes.Ok[cp.ReconcileOutput, providerError](cp.ReconcileOutput{Plan: plan, Access: access})
}

// DeleteControlPlane calls the provider's DeleteControlPlane; unsupported when it does not
// implement [capw.ManagedControlPlane].
func DeleteControlPlane(ctx *capw_provider_types.CallContext) witTypes.Result[deletion, providerError] {
	// The call lends its context: the borrow ends when the call does, and its handle
	// must be dropped before the function returns.
	defer ctx.Drop()
	p := dispatch.Current.ControlPlane
	if p == nil {
		return witTypes.Err[deletion](conv.Unsupported("control-plane.delete-control-plane"))
	}
	d, err := p.DeleteControlPlane(conv.CallSource{Ctx: ctx})
	if err != nil {
		return witTypes.Err[deletion](conv.Error(err))
	}
	return witTypes.Ok[deletion, providerError](conv.Deletion(d))
}

func fromPlanInput(input cp.PlanInput) capw.PlanInput {
	in := capw.PlanInput{
		Version:           conv.FromVersion(input.Version),
		Replicas:          input.Replicas,
		FailureDomains:    input.FailureDomains,
		Endpoint:          conv.FromOptionalEndpoint(input.Endpoint),
		FailuresTolerated: conv.FromOptionalUint32(input.FailuresTolerated),
	}
	for _, m := range input.Members {
		in.Members = append(in.Members, capw.Member{
			Machine:       conv.FromMachineRef(m.Machine),
			Version:       conv.FromVersion(m.Version),
			FailureDomain: conv.FromOptionalString(m.FailureDomain),
			Ready:         m.Ready,
			CreatedAt:     m.CreatedAt,
			Deleting:      m.Deleting,
			Etcd:          capw.EtcdMembership(m.Etcd),
			OutOfDate:     m.OutOfDate,
			Unhealthy:     m.Unhealthy,
		})
	}
	for _, o := range input.Objects {
		in.Objects = append(in.Objects, capw.HostedObject{
			APIVersion: o.ApiVersion,
			Kind:       o.Kind,
			Name:       o.Name,
			Ready:      o.Ready,
			Message:    conv.FromOptionalString(o.Message),
			Images:     o.Images,
			Addresses:  o.Addresses,
		})
	}
	return in
}

// toPlanOutput is out as the contract carries it, or what the contract cannot carry of it.
func toPlanOutput(out capw.PlanOutput) (cp.PlanOutput, string) {
	step, ok := toStep(out.Step)
	if !ok {
		return cp.PlanOutput{}, "answered a step of no known kind"
	}
	status := cp.ControlPlaneStatus{
		Initialized:       out.Status.Initialized,
		Ready:             out.Status.Ready,
		Version:           witTypes.None[capw_provider_types.KubernetesVersion](),
		Endpoint:          conv.OptionalEndpoint(out.Status.Endpoint),
		Conditions:        conv.Conditions(out.Status.Conditions),
		FailuresTolerated: conv.OptionalUint32(out.Status.FailuresTolerated),
	}
	if v := out.Status.Version; v != nil {
		status.Version = witTypes.Some(conv.Version(*v))
	}
	certificates := make([]cp.CertificateSecret, 0, len(out.Certificates))
	for _, c := range out.Certificates {
		certificates = append(certificates, certificateSecret(c))
	}
	datastore := witTypes.None[cp.SharedDatastore]()
	if d := out.SharedDatastore; d != nil {
		datastore = witTypes.Some(cp.SharedDatastore{Name: d.Name, Secret: d.Secret})
	}
	return cp.PlanOutput{
		Step:             step,
		Status:           status,
		Replicas:         out.Replicas,
		ReadyReplicas:    out.ReadyReplicas,
		UpToDateReplicas: out.UpToDateReplicas,
		Certificates:     certificates,
		SharedDatastore:  datastore,
	}, ""
}

func certificateSecret(c capw.CertificateSecret) cp.CertificateSecret {
	requests := make([]cp.CertificateRequest, 0, len(c.Certificates))
	for _, r := range c.Certificates {
		requests = append(requests, cp.CertificateRequest{
			Key:              r.Key,
			Authority:        uint8(r.Authority),
			Usage:            uint8(r.Usage),
			CommonName:       r.CommonName,
			Organizations:    conv.Strings(r.Organizations),
			Sans:             conv.Strings(r.SANs),
			KubeconfigServer: conv.OptionalString(r.KubeconfigServer),
		})
	}
	materials := make([]cp.SecretMaterial, 0, len(c.Materials))
	for _, m := range c.Materials {
		materials = append(materials, uint8(m))
	}
	return cp.CertificateSecret{Name: c.Name, Certificates: requests, Materials: materials}
}

func toStep(s capw.Step) (cp.Step, bool) {
	switch s.Kind {
	case capw.StepNone:
		return cp.MakeStepNone(), true
	case capw.StepCreateMachine:
		return cp.MakeStepCreateMachine(cp.MachineToCreate{
			Init:          s.Create.Init,
			Version:       conv.Version(s.Create.Version),
			FailureDomain: conv.OptionalString(s.Create.FailureDomain),
		}), true
	case capw.StepDeleteMachine:
		return cp.MakeStepDeleteMachine(conv.MachineRef(s.Machine)), true
	case capw.StepRemoveEtcdMember:
		return cp.MakeStepRemoveEtcdMember(conv.MachineRef(s.Machine)), true
	case capw.StepApplyManifests:
		return cp.MakeStepApplyManifests(conv.Strings(s.Manifests)), true
	case capw.StepWait:
		return cp.MakeStepWait(conv.InProgress(s.Wait)), true
	}
	return cp.Step{}, false
}
