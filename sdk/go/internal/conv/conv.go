// Package conv converts between the SDK's types and the contract's generated ones: one
// function per type and direction, used by the export glue of every extension point.
package conv

import (
	"capw.dev/sdk/go/capw"
	"capw.dev/sdk/go/internal/wit/imports/capw_provider_types"
	witTypes "go.bytecodealliance.org/pkg/wit/types"
)

// CallSource is the host's call-context, lent for one call, as the SDK reads it.
type CallSource struct {
	Ctx *capw_provider_types.CallContext
}

// Cluster asks the host for the call's cluster.
func (s CallSource) Cluster() capw.ClusterRef {
	c := s.Ctx.Cluster()
	return capw.ClusterRef{Namespace: c.Namespace, Name: c.Name, UID: c.Uid}
}

// Config asks the host for the call's config.
func (s CallSource) Config() string { return s.Ctx.Config() }

// IdempotencyKey asks the host for the call's key.
func (s CallSource) IdempotencyKey() string { return s.Ctx.IdempotencyKey() }

// RemainingMs asks the host for the time left.
func (s CallSource) RemainingMs() uint32 { return s.Ctx.RemainingMs() }

// Error is the contract's provider-error for err ([capw.AsProviderError]); a retry hint only
// comes with a retryable error.
func Error(err error) capw_provider_types.ProviderError {
	e := capw.AsProviderError(err)
	after := witTypes.None[uint32]()
	if e.Retryable && e.RetryAfter > 0 {
		after = witTypes.Some(capw.Millis(e.RetryAfter))
	}
	return capw_provider_types.ProviderError{
		Code:         uint8(e.Code),
		Message:      e.Message,
		Retryable:    e.Retryable,
		RetryAfterMs: after,
	}
}

// Unsupported is the error of a point the provider does not declare.
func Unsupported(what string) capw_provider_types.ProviderError {
	return Error(capw.Unsupported(what))
}

// Internal is the error of an answer the contract cannot carry (a bug of the provider).
func Internal(what string) capw_provider_types.ProviderError {
	return Error(capw.Permanent(capw.CodeInternal, "%s", what))
}

// Conditions to the contract.
func Conditions(cs []capw.Condition) []capw_provider_types.Condition {
	out := make([]capw_provider_types.Condition, 0, len(cs))
	for _, c := range cs {
		out = append(out, capw_provider_types.Condition{
			Type: c.Type, Status: uint8(c.Status), Reason: c.Reason, Message: c.Message,
		})
	}
	return out
}

// InProgress to the contract.
func InProgress(p capw.InProgress) capw_provider_types.InProgress {
	return capw_provider_types.InProgress{
		Reason:         p.Reason,
		Message:        p.Message,
		RequeueAfterMs: capw.Millis(p.RequeueAfter),
		Conditions:     Conditions(p.Conditions),
	}
}

// Deletion to the contract.
func Deletion(d capw.Deletion) capw_provider_types.Deletion {
	if d.InProgress != nil {
		return capw_provider_types.MakeDeletionInProgress(InProgress(*d.InProgress))
	}
	return capw_provider_types.MakeDeletionDeleted()
}

// Endpoint to the contract.
func Endpoint(e capw.Endpoint) capw_provider_types.Endpoint {
	return capw_provider_types.Endpoint{Host: e.Host, Port: e.Port}
}

// FromEndpoint from the contract.
func FromEndpoint(e capw_provider_types.Endpoint) capw.Endpoint {
	return capw.Endpoint{Host: e.Host, Port: e.Port}
}

// FromMachineRef from the contract.
func FromMachineRef(m capw_provider_types.MachineRef) capw.MachineRef {
	return capw.MachineRef{Name: m.Name, UID: m.Uid}
}

// FromVersion from the contract.
func FromVersion(v capw_provider_types.KubernetesVersion) capw.KubernetesVersion {
	return capw.KubernetesVersion{Major: v.Major, Minor: v.Minor, Patch: v.Patch}
}

// Addresses to the contract.
func Addresses(as []capw.Address) []capw_provider_types.Address {
	out := make([]capw_provider_types.Address, 0, len(as))
	for _, a := range as {
		out = append(out, capw_provider_types.Address{Kind: uint8(a.Kind), Address: a.Address})
	}
	return out
}

// OptionalString is "" as none.
func OptionalString(s string) witTypes.Option[string] {
	if s == "" {
		return witTypes.None[string]()
	}
	return witTypes.Some(s)
}

// FromOptionalString is none as "".
func FromOptionalString(o witTypes.Option[string]) string {
	if o.IsSome() {
		return o.Some()
	}
	return ""
}

// OptionalEndpoint to the contract: nil as none.
func OptionalEndpoint(e *capw.Endpoint) witTypes.Option[capw_provider_types.Endpoint] {
	if e == nil {
		return witTypes.None[capw_provider_types.Endpoint]()
	}
	return witTypes.Some(Endpoint(*e))
}

// FromOptionalEndpoint from the contract: none as nil.
func FromOptionalEndpoint(o witTypes.Option[capw_provider_types.Endpoint]) *capw.Endpoint {
	if !o.IsSome() {
		return nil
	}
	e := FromEndpoint(o.Some())
	return &e
}

// OptionalUint32 to the contract: nil as none.
func OptionalUint32(n *uint32) witTypes.Option[uint32] {
	if n == nil {
		return witTypes.None[uint32]()
	}
	return witTypes.Some(*n)
}

// FromOptionalUint32 from the contract: none as nil.
func FromOptionalUint32(o witTypes.Option[uint32]) *uint32 {
	if !o.IsSome() {
		return nil
	}
	n := o.Some()
	return &n
}

// Version to the contract.
func Version(v capw.KubernetesVersion) capw_provider_types.KubernetesVersion {
	return capw_provider_types.KubernetesVersion{Major: v.Major, Minor: v.Minor, Patch: v.Patch}
}

// MachineRef to the contract.
func MachineRef(m capw.MachineRef) capw_provider_types.MachineRef {
	return capw_provider_types.MachineRef{Name: m.Name, Uid: m.UID}
}

// Strings is s, never nil: the bindings lower a list from its slice.
func Strings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// JoinToken to the contract; the lifetime in whole seconds ([capw.Seconds]).
func JoinToken(t capw.JoinToken) capw_provider_types.JoinToken {
	return capw_provider_types.JoinToken{
		Item:        t.Item,
		Id:          t.ID,
		Secret:      t.Secret,
		TtlSeconds:  capw.Seconds(t.TTL),
		ExtraGroups: Strings(t.ExtraGroups),
	}
}

// FromJoinToken from the contract.
func FromJoinToken(t capw_provider_types.JoinToken) capw.JoinToken {
	return capw.JoinToken{
		Item:        t.Item,
		ID:          t.Id,
		Secret:      t.Secret,
		TTL:         capw.FromSeconds(t.TtlSeconds),
		ExtraGroups: t.ExtraGroups,
	}
}

// OptionalJoinToken to the contract: nil as none.
func OptionalJoinToken(t *capw.JoinToken) witTypes.Option[capw_provider_types.JoinToken] {
	if t == nil {
		return witTypes.None[capw_provider_types.JoinToken]()
	}
	return witTypes.Some(JoinToken(*t))
}
