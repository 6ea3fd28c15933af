package dispatch

import (
	"strings"
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
		ControlPlaneEndpoint: &capw.Endpoint{Host: ctx.Cluster().Name, Port: uint16(ctx.Config.Port)},
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
	if err != nil || *state.Ready.ControlPlaneEndpoint != (capw.Endpoint{Host: "c1", Port: 6443}) {
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

// machines is a control plane of the machines shape: Plan only.
type machines struct{}

func (machines) Describe() capw.Description {
	return capw.Description{Name: "machines", ConfigSchema: `{"type": "object"}`}
}

func (machines) ControlPlaneCapabilities() capw.ControlPlaneCapabilities {
	return capw.ControlPlaneCapabilities{Shape: capw.ShapeMachines, Scalable: true, ChainsUpgrades: true}
}

func (machines) Plan(*capw.Context[config], capw.PlanInput) (capw.PlanOutput, error) {
	return capw.PlanOutput{Step: capw.Step{Kind: capw.StepNone}}, nil
}

// managed is a control plane a service runs: Plan, and the service's two functions.
type managed struct{ machines }

func (managed) ControlPlaneCapabilities() capw.ControlPlaneCapabilities {
	return capw.ControlPlaneCapabilities{Shape: capw.ShapeManaged}
}

func (managed) ReconcileControlPlane(ctx *capw.Context[config], in capw.PlanInput) (capw.ReconcileOutput, error) {
	token := capw.JoinToken{Item: "join", ID: "abcdef", Secret: "0123456789abcdef"}
	return capw.ReconcileOutput{
		Plan: capw.PlanOutput{Step: capw.Step{Kind: capw.StepNone}, Status: capw.ControlPlaneStatus{Ready: true, Initialized: true}},
		Access: &capw.ControlPlaneAccess{
			Endpoint:  capw.Endpoint{Host: ctx.Cluster().Name + ".service", Port: uint16(ctx.Config.Port)},
			JoinToken: &token,
		},
	}, nil
}

func (managed) DeleteControlPlane(*capw.Context[config]) (capw.Deletion, error) {
	return capw.Deleted, nil
}

func unsupported(t *testing.T, what string, err error) {
	t.Helper()
	e := capw.AsProviderError(err)
	if e.Code != capw.CodeUnsupported || e.Retryable || !strings.Contains(e.Message, what) {
		t.Errorf("%s: %+v", what, e)
	}
}

func TestAMachinesControlPlaneAnswersTheServiceFunctionsUnsupported(t *testing.T) {
	table := Build[config](machines{})
	m := table.Describe()
	if m.ControlPlane == nil || m.ControlPlane.Shape != capw.ShapeMachines || !m.ControlPlane.ChainsUpgrades {
		t.Fatalf("%+v", m.ControlPlane)
	}
	_, err := table.ControlPlane.ReconcileControlPlane(source{config: `{}`}, capw.PlanInput{})
	unsupported(t, "control-plane.reconcile-control-plane", err)
	_, err = table.ControlPlane.DeleteControlPlane(source{config: `{}`})
	unsupported(t, "control-plane.delete-control-plane", err)
}

func TestAManagedControlPlaneIsReconciledAndDeleted(t *testing.T) {
	table := Build[config](managed{})
	out, err := table.ControlPlane.ReconcileControlPlane(source{config: `{}`}, capw.PlanInput{})
	if err != nil || out.Access == nil || out.Access.Endpoint != (capw.Endpoint{Host: "c1.service", Port: 6443}) {
		t.Fatalf("%+v %v", out, err)
	}
	if out.Access.JoinToken.ID != "abcdef" {
		t.Errorf("%v", out.Access.JoinToken)
	}
	if d, err := table.ControlPlane.DeleteControlPlane(source{config: `{}`}); err != nil || !d.Done() {
		t.Errorf("%+v %v", d, err)
	}
	_, err = table.ControlPlane.DeleteControlPlane(source{config: `{ not JSON`})
	if e := capw.AsProviderError(err); e.Code != capw.CodeInvalidInput {
		t.Errorf("%+v", e)
	}
}

// kubeadmLike is a bootstrap provider that fills in the functions it serves and keeps the
// defaults of the others.
type kubeadmLike struct {
	capw.UnsupportedBootstrap[config]
}

func (kubeadmLike) Describe() capw.Description {
	return capw.Description{Name: "kubeadm-like", ConfigSchema: `{"type": "object"}`}
}

// tokens is a bootstrap provider whose join data carries a token.
type tokens struct{ kubeadmLike }

func (tokens) CurrentJoinToken(_ *capw.Context[config], secrets []capw.SecretItem) (*capw.JoinToken, error) {
	for _, s := range secrets {
		if s.Name == "join" {
			id, secret, _ := strings.Cut(string(s.Data), ".")
			return &capw.JoinToken{Item: "join", ID: id, Secret: secret}, nil
		}
	}
	return nil, nil
}

func (tokens) RenewJoinToken(*capw.Context[config], []capw.SecretItem) (capw.JoinToken, error) {
	return capw.JoinToken{Item: "join", ID: "fedcba", Secret: "fedcba9876543210"}, nil
}

func TestABootstrapProviderWithoutTokensHasNoneToKeep(t *testing.T) {
	table := Build[config](kubeadmLike{})
	if table.Bootstrap == nil {
		t.Fatal("bootstrap not declared")
	}
	token, err := table.Bootstrap.CurrentJoinToken(source{config: `{}`}, nil)
	if err != nil || token != nil {
		t.Errorf("%v %v", token, err)
	}
	_, err = table.Bootstrap.RenewJoinToken(source{config: `{}`}, nil)
	unsupported(t, "bootstrap.renew-join-token", err)
}

func TestABootstrapProviderWithTokensNamesAndRenewsThem(t *testing.T) {
	table := Build[config](tokens{})
	secrets := []capw.SecretItem{{Name: "join", Data: []byte("abcdef.0123456789abcdef")}}
	token, err := table.Bootstrap.CurrentJoinToken(source{config: `{}`}, secrets)
	if err != nil || token == nil || token.ID != "abcdef" {
		t.Fatalf("%v %v", token, err)
	}
	renewed, err := table.Bootstrap.RenewJoinToken(source{config: `{}`}, secrets)
	if err != nil || renewed.ID != "fedcba" {
		t.Errorf("%v %v", renewed, err)
	}
}
