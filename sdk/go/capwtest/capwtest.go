// Package capwtest is what a provider's unit tests need, with plain go test and no wasm:
// call contexts, checks of configs the way validate-config answers them, a fake host whose
// secrets, HTTP answers and log the test controls, and checks of the contract's rules that a
// provider's own answers can break ([AssertJoinTokenRenews], [AssertStepKeepsEtcd]).
//
// Its assertions fail the test with a message that says what was expected and what came
// instead.
//
//	func TestRefusesAnEmptyZone(t *testing.T) {
//		errors := capwtest.AssertRefusedAt[Config](t, Provider{}, `{"zones": ["a", ""]}`, "/zones/1")
//		capwtest.AssertFieldError(t, errors, "/zones/1", "must not be empty")
//	}
package capwtest

import (
	"slices"
	"strings"
	"testing"
	"time"

	"capw.dev/sdk/go/capw"
)

// The defaults of the contexts [Context] builds.
const (
	// Namespace of the cluster a test call concerns.
	Namespace = "default"
	// ClusterName of the cluster a test call concerns.
	ClusterName = "c1"
	// IdempotencyKey of a test call.
	IdempotencyKey = "key-1"
	// Deadline of a test call.
	Deadline = 10 * time.Second
)

// Cluster is the cluster namespace/name, with uid uid-NAME.
func Cluster(namespace, name string) capw.ClusterRef {
	return capw.ClusterRef{Namespace: namespace, Name: name, UID: "uid-" + name}
}

// Machine is the machine name, with uid uid-NAME.
func Machine(name string) capw.MachineRef {
	return capw.MachineRef{Name: name, UID: "uid-" + name}
}

// Version is Kubernetes v1.MINOR.0.
func Version(minor uint32) capw.KubernetesVersion {
	return capw.KubernetesVersion{Major: 1, Minor: minor}
}

// Call is the fields of a test call's context; [NewCall] starts from the defaults.
type Call struct {
	Cluster        capw.ClusterRef
	IdempotencyKey string
	// Deadline is the time the call is allowed, counted from when the context is built.
	Deadline time.Duration
}

// NewCall is a call for cluster [Namespace]/[ClusterName] with [IdempotencyKey] and
// [Deadline].
func NewCall() Call {
	return Call{Cluster: Cluster(Namespace, ClusterName), IdempotencyKey: IdempotencyKey, Deadline: Deadline}
}

// source serves a test call's fields.
type source struct {
	call    Call
	config  string
	started time.Time
}

func (s source) Cluster() capw.ClusterRef { return s.call.Cluster }
func (s source) Config() string           { return s.config }
func (s source) IdempotencyKey() string   { return s.call.IdempotencyKey }
func (s source) RemainingMs() uint32 {
	return capw.Millis(s.call.Deadline - time.Since(s.started))
}

// ContextOf is the context of call with the JSON config parsed into C (defaults first);
// the test fails when it does not parse.
func ContextOf[C any](t testing.TB, call Call, config string) *capw.Context[C] {
	t.Helper()
	parsed, err := capw.ParseConfig[C](config)
	if err != nil {
		t.Fatalf("test config %s: %v", config, err)
	}
	return capw.NewContext[C](source{call: call, config: config, started: time.Now()}, parsed)
}

// Context is a call for the default cluster, key and deadline ([NewCall]) with the JSON
// config parsed into C.
func Context[C any](t testing.TB, config string) *capw.Context[C] {
	t.Helper()
	return ContextOf[C](t, NewCall(), config)
}

// WithConfig is a context for call whose config is already built.
func WithConfig[C any](call Call, config C) *capw.Context[C] {
	return capw.NewContext[C](source{call: call, config: "", started: time.Now()}, config)
}

// ConfigSchema is p's config schema, checked to compile as the host compiles it; the test
// fails when it does not.
func ConfigSchema[C any](t testing.TB, p capw.Provider[C]) *capw.Schema {
	t.Helper()
	schema, err := capw.CompileSchema(p.Describe().ConfigSchema)
	if err != nil {
		t.Fatalf("the config schema of %s: %v", p.Describe().Name, err)
	}
	return schema
}

func list(errors []capw.FieldError) string {
	if len(errors) == 0 {
		return "none (accepted)"
	}
	var b strings.Builder
	for _, e := range errors {
		b.WriteString("\n`" + e.Path + "`: " + e.Message)
	}
	return b.String()
}

// AssertAccepted checks that validate-config of p accepts the JSON config: its schema, its
// parse into C and its rules.
func AssertAccepted[C any](t testing.TB, p capw.Provider[C], config string) {
	t.Helper()
	ConfigSchema[C](t, p)
	if errors := capw.CheckConfig[C](p.Describe().ConfigSchema, config); len(errors) > 0 {
		t.Errorf("validate-config of %s refused %s:%s", p.Describe().Name, config, list(errors))
	}
}

// AssertRefusedAt checks that validate-config of p refuses the JSON config with errors at
// exactly paths (JSON Pointers, in the order reported), and returns them for checks of their
// messages ([AssertFieldError]).
func AssertRefusedAt[C any](t testing.TB, p capw.Provider[C], config string, paths ...string) []capw.FieldError {
	t.Helper()
	errors := capw.CheckConfig[C](p.Describe().ConfigSchema, config)
	found := make([]string, 0, len(errors))
	for _, e := range errors {
		found = append(found, e.Path)
	}
	if len(errors) == 0 || !slices.Equal(found, paths) {
		t.Errorf("validate-config of %s on %s: expected errors at %q, got:%s", p.Describe().Name, config, paths, list(errors))
	}
	return errors
}

// AssertFieldError checks that errors has one at path whose message contains contains.
func AssertFieldError(t testing.TB, errors []capw.FieldError, path, contains string) {
	t.Helper()
	for _, e := range errors {
		if e.Path == path && strings.Contains(e.Message, contains) {
			return
		}
	}
	t.Errorf("expected an error at `%s` containing %q, got:%s", path, contains, list(errors))
}
