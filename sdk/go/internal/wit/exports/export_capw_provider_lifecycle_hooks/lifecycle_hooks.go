// Package export_capw_provider_lifecycle_hooks is the export glue of
// `capw:provider/lifecycle-hooks`: it calls the provider's [capw.LifecycleHooks], or answers
// unsupported when the provider does not implement the point.
package export_capw_provider_lifecycle_hooks

import (
	"capw.dev/sdk/go/capw"
	"capw.dev/sdk/go/internal/conv"
	"capw.dev/sdk/go/internal/dispatch"
	"capw.dev/sdk/go/internal/wit/imports/capw_provider_lifecycle_hooks"
	"capw.dev/sdk/go/internal/wit/imports/capw_provider_types"
	witTypes "go.bytecodealliance.org/pkg/wit/types"
)

type (
	hookResponse  = capw_provider_lifecycle_hooks.HookResponse
	providerError = capw_provider_types.ProviderError
)

// Handle calls the provider's Handle.
func Handle(ctx *capw_provider_types.CallContext, request capw_provider_lifecycle_hooks.HookRequest) witTypes.Result[hookResponse, providerError] {
	// The call lends its context: the borrow ends when the call does, and its handle
	// must be dropped before the function returns.
	defer ctx.Drop()
	p := dispatch.Current.LifecycleHooks
	if p == nil {
		return witTypes.Err[hookResponse](conv.Unsupported("lifecycle-hooks.handle"))
	}
	r := capw.HookRequest{Hook: capw.Hook(request.Hook), ToVersion: conv.FromVersion(request.ToVersion)}
	if request.FromVersion.IsSome() {
		from := conv.FromVersion(request.FromVersion.Some())
		r.FromVersion = &from
	}
	answer, err := p.Handle(conv.CallSource{Ctx: ctx}, r)
	if err != nil {
		return witTypes.Err[hookResponse](conv.Error(err))
	}
	if answer.Hold != nil {
		return witTypes.Ok[hookResponse, providerError](
			capw_provider_lifecycle_hooks.MakeHookResponseHold(conv.InProgress(*answer.Hold)))
	}
	return witTypes.Ok[hookResponse, providerError](capw_provider_lifecycle_hooks.MakeHookResponseProceed())
}
