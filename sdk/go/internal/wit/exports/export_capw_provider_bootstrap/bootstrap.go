// Package export_capw_provider_bootstrap is the export glue of `capw:provider/bootstrap`: it
// converts the contract's types to the SDK's and calls the provider's [capw.Bootstrap]
// methods, or answers unsupported when the provider does not implement the point.
package export_capw_provider_bootstrap

import (
	"capw.dev/sdk/go/capw"
	"capw.dev/sdk/go/internal/conv"
	"capw.dev/sdk/go/internal/dispatch"
	"capw.dev/sdk/go/internal/wit/imports/capw_provider_bootstrap"
	"capw.dev/sdk/go/internal/wit/imports/capw_provider_types"
	witTypes "go.bytecodealliance.org/pkg/wit/types"
)

type (
	callContext   = capw_provider_types.CallContext
	providerError = capw_provider_types.ProviderError
	secretsState  = capw_provider_bootstrap.SecretsState
	bootstrapData = capw_provider_bootstrap.BootstrapData
	secretItem    = capw_provider_bootstrap.SecretItem
	joinToken     = capw_provider_types.JoinToken
)

func point() *dispatch.Bootstrap { return dispatch.Current.Bootstrap }

func fromItems(items []secretItem) []capw.SecretItem {
	out := make([]capw.SecretItem, 0, len(items))
	for _, i := range items {
		out = append(out, capw.SecretItem{Name: i.Name, Data: i.Data})
	}
	return out
}

// ClusterSecrets calls the provider's ClusterSecrets.
func ClusterSecrets(ctx *callContext) witTypes.Result[secretsState, providerError] {
	// The call lends its context: the borrow ends when the call does, and its handle
	// must be dropped before the function returns.
	defer ctx.Drop()
	p := point()
	if p == nil {
		return witTypes.Err[secretsState](conv.Unsupported("bootstrap.cluster-secrets"))
	}
	s, err := p.ClusterSecrets(conv.CallSource{Ctx: ctx})
	if err != nil {
		return witTypes.Err[secretsState](conv.Error(err))
	}
	if s.InProgress != nil {
		return witTypes.Ok[secretsState, providerError](
			capw_provider_bootstrap.MakeSecretsStateInProgress(conv.InProgress(*s.InProgress)))
	}
	items := make([]secretItem, 0, len(s.Items))
	for _, i := range s.Items {
		items = append(items, secretItem{Name: i.Name, Data: i.Data})
	}
	return witTypes.Ok[secretsState, providerError](capw_provider_bootstrap.MakeSecretsStateReady(items))
}

// Generate calls the provider's Generate.
func Generate(ctx *callContext, request capw_provider_bootstrap.BootstrapRequest) witTypes.Result[bootstrapData, providerError] {
	// The call lends its context: the borrow ends when the call does, and its handle
	// must be dropped before the function returns.
	defer ctx.Drop()
	p := point()
	if p == nil {
		return witTypes.Err[bootstrapData](conv.Unsupported("bootstrap.generate"))
	}
	members := make([]capw.ControlPlaneMember, 0, len(request.ControlPlaneMembers))
	for _, m := range request.ControlPlaneMembers {
		members = append(members, capw.ControlPlaneMember{Name: m.Name, Address: m.Address})
	}
	r := capw.BootstrapRequest{
		Machine:             conv.FromMachineRef(request.Machine),
		Role:                capw.MachineRole(request.Role),
		Version:             conv.FromVersion(request.Version),
		Endpoint:            conv.FromEndpoint(request.Endpoint),
		Secrets:             fromItems(request.Secrets),
		ControlPlaneMembers: members,
	}
	if request.Join.IsSome() {
		j := request.Join.Some()
		r.Join = &capw.JoinCredentials{CACertificate: j.CaCertificate}
		if j.Token.IsSome() {
			t := conv.FromJoinToken(j.Token.Some())
			r.Join.Token = &t
		}
	}
	d, err := p.Generate(conv.CallSource{Ctx: ctx}, r)
	if err != nil {
		return witTypes.Err[bootstrapData](conv.Error(err))
	}
	return witTypes.Ok[bootstrapData, providerError](bootstrapData{Format: uint8(d.Format), Data: d.Data})
}

// Kubeconfig calls the provider's Kubeconfig.
func Kubeconfig(ctx *callContext, endpoint capw_provider_types.Endpoint, secrets []secretItem) witTypes.Result[string, providerError] {
	// The call lends its context: the borrow ends when the call does, and its handle
	// must be dropped before the function returns.
	defer ctx.Drop()
	p := point()
	if p == nil {
		return witTypes.Err[string](conv.Unsupported("bootstrap.kubeconfig"))
	}
	k, err := p.Kubeconfig(conv.CallSource{Ctx: ctx}, conv.FromEndpoint(endpoint), fromItems(secrets))
	if err != nil {
		return witTypes.Err[string](conv.Error(err))
	}
	return witTypes.Ok[string, providerError](k)
}

// CurrentJoinToken calls the provider's CurrentJoinToken ([capw.JoinTokens]); nil when it
// implements none.
func CurrentJoinToken(ctx *callContext, secrets []secretItem) witTypes.Result[witTypes.Option[joinToken], providerError] {
	// The call lends its context: the borrow ends when the call does, and its handle
	// must be dropped before the function returns.
	defer ctx.Drop()
	p := point()
	if p == nil {
		return witTypes.Err[witTypes.Option[joinToken]](conv.Unsupported("bootstrap.current-join-token"))
	}
	t, err := p.CurrentJoinToken(conv.CallSource{Ctx: ctx}, fromItems(secrets))
	if err != nil {
		return witTypes.Err[witTypes.Option[joinToken]](conv.Error(err))
	}
	return witTypes.Ok[witTypes.Option[joinToken], providerError](conv.OptionalJoinToken(t))
}

// RenewJoinToken calls the provider's RenewJoinToken ([capw.JoinTokens]); unsupported when
// it implements none.
func RenewJoinToken(ctx *callContext, secrets []secretItem) witTypes.Result[joinToken, providerError] {
	// The call lends its context: the borrow ends when the call does, and its handle
	// must be dropped before the function returns.
	defer ctx.Drop()
	p := point()
	if p == nil {
		return witTypes.Err[joinToken](conv.Unsupported("bootstrap.renew-join-token"))
	}
	t, err := p.RenewJoinToken(conv.CallSource{Ctx: ctx}, fromItems(secrets))
	if err != nil {
		return witTypes.Err[joinToken](conv.Error(err))
	}
	return witTypes.Ok[joinToken, providerError](conv.JoinToken(t))
}
