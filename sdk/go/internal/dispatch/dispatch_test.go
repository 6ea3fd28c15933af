package dispatch

import (
	"testing"

	"capw.dev/sdk/go/capw"
	"capw.dev/sdk/go/capwtest"
)

type config struct {
	Port int `json:"port"`
}

func (c *config) SetDefaults() { c.Port = 6443 }

type infra struct {
	capw.UnsupportedInfrastructure[config]
}

func (infra) Describe() capw.Description {
	return capw.Description{Name: "probe", Version: "0.1.0", ConfigSchema: `{"type": "object",
		"additionalProperties": false, "properties": {"port": {"type": "integer"}}}`}
}

func (infra) ReconcileCluster(ctx *capw.Context[config]) (capw.ClusterState, error) {
	return capw.ClusterReady(capw.ClusterInfrastructure{
		ControlPlaneEndpoint: capw.Endpoint{Host: ctx.Cluster().Name, Port: uint16(ctx.Config.Port)},
	}), nil
}

// source is a call with a config of the test's choosing.
type source struct{ config string }

func (s source) Cluster() capw.ClusterRef { return capwtest.Cluster("default", "c1") }
func (s source) Config() string           { return s.config }
func (s source) IdempotencyKey() string   { return "k" }
func (s source) RemainingMs() uint32      { return 1000 }

func TestOnlyTheImplementedPointsAreServed(t *testing.T) {
	table := Build[config](infra{})
	if table.Infrastructure == nil || table.Bootstrap != nil || table.ControlPlane != nil || table.LifecycleHooks != nil {
		t.Fatalf("%+v", table)
	}
	m := table.Describe()
	if m.Name != "probe" || len(m.Points) != 1 || m.ControlPlane != nil {
		t.Fatalf("%+v", m)
	}
}

func TestCallsParseTheirConfigWithDefaults(t *testing.T) {
	table := Build[config](infra{})
	state, err := table.Infrastructure.ReconcileCluster(source{config: `{}`})
	if err != nil || state.Ready.ControlPlaneEndpoint != (capw.Endpoint{Host: "c1", Port: 6443}) {
		t.Fatalf("%+v %v", state, err)
	}
	_, err = table.Infrastructure.ReconcileCluster(source{config: `{ this is not JSON`})
	if e := capw.AsProviderError(err); e.Code != capw.CodeInvalidInput || e.Retryable {
		t.Fatalf("%+v", e)
	}
	_, err = table.Infrastructure.ListMachines(source{config: `{}`})
	if e := capw.AsProviderError(err); e.Code != capw.CodeUnsupported || e.Retryable {
		t.Fatalf("%+v", e)
	}
}

func TestValidateConfigChecksTheSchema(t *testing.T) {
	table := Build[config](infra{})
	if errs := table.ValidateConfig(`{"port": 1}`); len(errs) != 0 {
		t.Fatalf("%+v", errs)
	}
	if errs := table.ValidateConfig(`{"port": "x"}`); len(errs) != 1 || errs[0].Path != "/port" {
		t.Fatalf("%+v", errs)
	}
}
