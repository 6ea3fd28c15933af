// Package export_capw_provider_infrastructure is the export glue of
// `capw:provider/infrastructure`: it converts the contract's types to the SDK's and calls the
// provider's [capw.Infrastructure] methods, or answers unsupported when the provider does not
// implement the point.
package export_capw_provider_infrastructure

import (
	"capw.dev/sdk/go/capw"
	"capw.dev/sdk/go/internal/conv"
	"capw.dev/sdk/go/internal/dispatch"
	"capw.dev/sdk/go/internal/wit/imports/capw_provider_infrastructure"
	"capw.dev/sdk/go/internal/wit/imports/capw_provider_types"
	witTypes "go.bytecodealliance.org/pkg/wit/types"
)

type (
	callContext   = capw_provider_types.CallContext
	providerError = capw_provider_types.ProviderError
	clusterState  = capw_provider_infrastructure.ClusterState
	machineStatus = capw_provider_infrastructure.MachineStatus
	listed        = capw_provider_infrastructure.ListedMachine
	deletion      = capw_provider_types.Deletion
)

func point() *dispatch.Infrastructure { return dispatch.Current.Infrastructure }

// ReconcileCluster calls the provider's ReconcileCluster.
func ReconcileCluster(ctx *callContext) witTypes.Result[clusterState, providerError] {
	// The call lends its context: the borrow ends when the call does, and its handle
	// must be dropped before the function returns.
	defer ctx.Drop()
	p := point()
	if p == nil {
		return witTypes.Err[clusterState](conv.Unsupported("infrastructure.reconcile-cluster"))
	}
	state, err := p.ReconcileCluster(conv.CallSource{Ctx: ctx})
	if err != nil {
		return witTypes.Err[clusterState](conv.Error(err))
	}
	switch {
	case state.Ready != nil:
		r := state.Ready
		domains := make([]capw_provider_infrastructure.FailureDomain, 0, len(r.FailureDomains))
		for _, d := range r.FailureDomains {
			domains = append(domains, capw_provider_infrastructure.FailureDomain{Name: d.Name, ControlPlane: d.ControlPlane})
		}
		return witTypes.Ok[clusterState, providerError](capw_provider_infrastructure.MakeClusterStateReady(
			capw_provider_infrastructure.ClusterInfrastructure{
				ControlPlaneEndpoint: conv.OptionalEndpoint(r.ControlPlaneEndpoint),
				FailureDomains:       domains,
				Conditions:           conv.Conditions(r.Conditions),
			}))
	case state.InProgress != nil:
		return witTypes.Ok[clusterState, providerError](
			capw_provider_infrastructure.MakeClusterStateInProgress(conv.InProgress(*state.InProgress)))
	}
	return witTypes.Err[clusterState](conv.Internal("reconcile-cluster answered neither ready nor in-progress"))
}

// DeleteCluster calls the provider's DeleteCluster.
func DeleteCluster(ctx *callContext) witTypes.Result[deletion, providerError] {
	// The call lends its context: the borrow ends when the call does, and its handle
	// must be dropped before the function returns.
	defer ctx.Drop()
	p := point()
	if p == nil {
		return witTypes.Err[deletion](conv.Unsupported("infrastructure.delete-cluster"))
	}
	d, err := p.DeleteCluster(conv.CallSource{Ctx: ctx})
	if err != nil {
		return witTypes.Err[deletion](conv.Error(err))
	}
	return witTypes.Ok[deletion, providerError](conv.Deletion(d))
}

// ReconcileMachine calls the provider's ReconcileMachine.
func ReconcileMachine(ctx *callContext, spec capw_provider_infrastructure.MachineSpec) witTypes.Result[machineStatus, providerError] {
	// The call lends its context: the borrow ends when the call does, and its handle
	// must be dropped before the function returns.
	defer ctx.Drop()
	p := point()
	if p == nil {
		return witTypes.Err[machineStatus](conv.Unsupported("infrastructure.reconcile-machine"))
	}
	s, err := p.ReconcileMachine(conv.CallSource{Ctx: ctx}, capw.MachineSpec{
		Machine:       conv.FromMachineRef(spec.Machine),
		Role:          capw.MachineRole(spec.Role),
		Pool:          spec.Pool,
		Version:       conv.FromVersion(spec.Version),
		FailureDomain: conv.FromOptionalString(spec.FailureDomain),
		BootstrapData: spec.BootstrapData,
	})
	if err != nil {
		return witTypes.Err[machineStatus](conv.Error(err))
	}
	requeue := witTypes.None[uint32]()
	if s.RequeueAfter > 0 {
		requeue = witTypes.Some(capw.Millis(s.RequeueAfter))
	}
	return witTypes.Ok[machineStatus, providerError](machineStatus{
		ProviderId:     conv.OptionalString(s.ProviderID),
		Phase:          uint8(s.Phase),
		Addresses:      conv.Addresses(s.Addresses),
		FailureDomain:  conv.OptionalString(s.FailureDomain),
		Message:        s.Message,
		RequeueAfterMs: requeue,
		Conditions:     conv.Conditions(s.Conditions),
	})
}

// DeleteMachine calls the provider's DeleteMachine.
func DeleteMachine(ctx *callContext, machine capw_provider_types.MachineRef) witTypes.Result[deletion, providerError] {
	// The call lends its context: the borrow ends when the call does, and its handle
	// must be dropped before the function returns.
	defer ctx.Drop()
	p := point()
	if p == nil {
		return witTypes.Err[deletion](conv.Unsupported("infrastructure.delete-machine"))
	}
	d, err := p.DeleteMachine(conv.CallSource{Ctx: ctx}, conv.FromMachineRef(machine))
	if err != nil {
		return witTypes.Err[deletion](conv.Error(err))
	}
	return witTypes.Ok[deletion, providerError](conv.Deletion(d))
}

// ListMachines calls the provider's ListMachines.
func ListMachines(ctx *callContext) witTypes.Result[[]listed, providerError] {
	// The call lends its context: the borrow ends when the call does, and its handle
	// must be dropped before the function returns.
	defer ctx.Drop()
	p := point()
	if p == nil {
		return witTypes.Err[[]listed](conv.Unsupported("infrastructure.list-machines"))
	}
	machines, err := p.ListMachines(conv.CallSource{Ctx: ctx})
	if err != nil {
		return witTypes.Err[[]listed](conv.Error(err))
	}
	out := make([]listed, 0, len(machines))
	for _, m := range machines {
		out = append(out, listed{
			IdempotencyKey: m.IdempotencyKey,
			ProviderId:     m.ProviderID,
			MachineName:    m.MachineName,
			Phase:          uint8(m.Phase),
		})
	}
	return witTypes.Ok[[]listed, providerError](out)
}
