package capwtest_test

import (
	"testing"

	"capw.dev/sdk/go/capw"
	"capw.dev/sdk/go/capwtest"
)

type config struct {
	Port  int      `json:"port"`
	Names []string `json:"names"`
}

func (c config) Validate() []capw.FieldError {
	var errs []capw.FieldError
	for i, n := range c.Names {
		for _, before := range c.Names[:i] {
			if n == before {
				errs = append(errs, capw.FieldError{Path: capw.JSONPointer("names", string(rune('0'+i))), Message: "listed twice"})
			}
		}
	}
	return errs
}

type probe struct{}

func (probe) Describe() capw.Description {
	return capw.Description{Name: "probe", ConfigSchema: `{"type": "object", "additionalProperties": false,
		"required": ["port"], "properties": {"port": {"type": "integer"},
		"names": {"type": "array", "items": {"type": "string"}}}}`}
}

func TestContextsDefaultToClusterC1(t *testing.T) {
	ctx := capwtest.Context[config](t, `{"port": 1}`)
	if ctx.Cluster() != capwtest.Cluster("default", "c1") || ctx.IdempotencyKey() != "key-1" || ctx.Config.Port != 1 {
		t.Fatalf("%v", ctx)
	}
	if r := ctx.Remaining(); r > capwtest.Deadline || r < capwtest.Deadline/2 {
		t.Fatalf("%v", r)
	}
	call := capwtest.NewCall()
	call.Cluster = capwtest.Cluster("team-a", "c2")
	call.Deadline = 0
	other := capwtest.ContextOf[config](t, call, `{"port": 2}`)
	if other.Cluster().UID != "uid-c2" || other.Remaining() != 0 {
		t.Fatalf("%v", other)
	}
	if capwtest.WithConfig(call, 5).Config != 5 {
		t.Fatal("config")
	}
}

func TestAcceptedAndRefusedConfigs(t *testing.T) {
	capwtest.AssertAccepted[config](t, probe{}, `{"port": 6443, "names": ["a", "b"]}`)
	errs := capwtest.AssertRefusedAt[config](t, probe{}, `{"port": 1, "names": ["a", "b", "a"]}`, "/names/2")
	capwtest.AssertFieldError(t, errs, "/names/2", "twice")
	capwtest.AssertRefusedAt[config](t, probe{}, `{"port": "x"}`, "/port")
	capwtest.AssertRefusedAt[config](t, probe{}, `{"port": 1, "other": 1}`, "/other")
	capwtest.AssertRefusedAt[config](t, probe{}, `{}`, "")
	capwtest.AssertRefusedAt[config](t, probe{}, "not json", "")
}

// recorder is a testing.TB that records failures instead of failing.
type recorder struct {
	testing.TB
	failed []string
}

func (r *recorder) Helper()                        {}
func (r *recorder) Errorf(format string, a ...any) { r.failed = append(r.failed, format) }
func (r *recorder) Fatalf(format string, a ...any) { r.failed = append(r.failed, format) }

func TestAssertionsFailWhenTheyShould(t *testing.T) {
	r := &recorder{TB: t}
	capwtest.AssertAccepted[config](r, probe{}, `{}`)
	capwtest.AssertRefusedAt[config](r, probe{}, `{"port": 1}`, "/port")
	capwtest.AssertFieldError(r, []capw.FieldError{{Path: "/names/1", Message: "listed twice"}}, "/names/1", "empty")
	if len(r.failed) != 3 {
		t.Fatalf("%d failures: %q", len(r.failed), r.failed)
	}
}
