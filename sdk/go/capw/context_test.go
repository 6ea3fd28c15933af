package capw_test

import (
	"testing"
	"time"

	"capw.dev/sdk/go/capw"
	"capw.dev/sdk/go/capwtest"
)

// counting serves a call and counts what is asked of it.
type counting struct{ cluster, key int }

func (c *counting) Cluster() capw.ClusterRef { c.cluster++; return capwtest.Cluster("default", "c1") }
func (c *counting) Config() string           { return "{}" }
func (c *counting) IdempotencyKey() string   { c.key++; return "k" }
func (c *counting) RemainingMs() uint32      { return 1500 }

func TestFieldsAreAskedForOnceAndOnlyWhenRead(t *testing.T) {
	source := &counting{}
	ctx := capw.NewContext(source, 5)
	_ = ctx.String()
	if source.cluster+source.key != 0 {
		t.Fatal("asked before reading")
	}
	for range 3 {
		if ctx.Cluster().UID != "uid-c1" || ctx.IdempotencyKey() != "k" {
			t.Fatal("fields")
		}
	}
	if source.cluster != 1 || source.key != 1 || ctx.Remaining() != 1500*time.Millisecond {
		t.Fatalf("%+v", source)
	}
}

func TestPointsAreTheInterfacesImplemented(t *testing.T) {
	if got := capw.Points[struct{}](infraOnly{}); len(got) != 1 || got[0] != capw.PointInfrastructure {
		t.Fatalf("%v", got)
	}
}

type infraOnly struct {
	capw.UnsupportedInfrastructure[struct{}]
}

func (infraOnly) Describe() capw.Description { return capw.Description{Name: "x"} }
