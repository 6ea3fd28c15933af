package capw

import (
	"fmt"
	"time"
)

// CallSource serves the fields of a call's context. Inside a component it is the host's
// call-context, lent for the length of the call; in a unit test, capwtest's record.
type CallSource interface {
	// Cluster is the cluster the call concerns.
	Cluster() ClusterRef
	// Config is the provider's config for the call, as JSON.
	Config() string
	// IdempotencyKey is the call's idempotency key.
	IdempotencyKey() string
	// RemainingMs is the time left before the host cancels the call, in milliseconds.
	RemainingMs() uint32
}

// Context is what a call knows about its caller's intent, with the config already parsed
// into the provider's config type C.
//
// # Guarantees
//
//   - Config is the provider's config for this call, with the ClusterClass's patches and the
//     pool's overrides applied, its defaults set ([Defaulter]); the host checked it with the
//     schema and validate-config first.
//   - [Context.IdempotencyKey] is stable for one intent across retries and host restarts: two
//     calls with the same key must never create two resources.
//
// The cluster and the key are asked of the host the first time they are read, once per call;
// the time left is asked for live.
type Context[C any] struct {
	// Config is the provider's config for this call.
	Config C

	source  CallSource
	cluster *ClusterRef
	key     *string
}

// NewContext is the context of a call whose fields come from source, with its config
// already parsed. The SDK builds the contexts of real calls itself; capwtest builds them for
// tests.
func NewContext[C any](source CallSource, config C) *Context[C] {
	return &Context[C]{Config: config, source: source}
}

// Cluster is the cluster the call concerns.
func (c *Context[C]) Cluster() ClusterRef {
	if c.cluster == nil {
		cluster := c.source.Cluster()
		c.cluster = &cluster
	}
	return *c.cluster
}

// IdempotencyKey is stable for one intent across retries, restarts and crashes: two calls with
// the same key must never create two resources.
func (c *Context[C]) IdempotencyKey() string {
	if c.key == nil {
		key := c.source.IdempotencyKey()
		c.key = &key
	}
	return *c.key
}

// Remaining is the time left before the host cancels the call; zero once it has passed. Bound
// outbound requests by it, so that a slow backend yields an error the provider chose rather
// than a cancellation.
func (c *Context[C]) Remaining() time.Duration {
	return time.Duration(c.source.RemainingMs()) * time.Millisecond
}

// String shows the config and the fields read so far: printing a context asks the host for
// nothing.
func (c *Context[C]) String() string {
	out := fmt.Sprintf("Context{Config: %+v", c.Config)
	if c.cluster != nil {
		out += fmt.Sprintf(", Cluster: %+v", *c.cluster)
	}
	if c.key != nil {
		out += fmt.Sprintf(", IdempotencyKey: %q", *c.key)
	}
	return out + "}"
}
