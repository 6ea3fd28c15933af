package main

import (
	"testing"

	"capw.dev/sdk/go/capwtest"
)

func TestTheEndpointIsNamedUnderTheDomain(t *testing.T) {
	ctx := capwtest.Context[Config](t, `{"domain": "lab.example"}`)
	state, err := Provider{}.ReconcileCluster(ctx)
	if err != nil || state.Ready == nil {
		t.Fatalf("not ready: %+v, %v", state, err)
	}
	if e := state.Ready.ControlPlaneEndpoint; e == nil || e.Host != ctx.Cluster().Name+".lab.example" {
		t.Errorf("endpoint %v", e)
	}
	if domain := state.Ready.FailureDomains[0].Name; domain != "zone-a" {
		t.Errorf("first failure domain %q", domain)
	}
}

func TestABadFailureDomainIsNamed(t *testing.T) {
	errors := capwtest.AssertRefusedAt[Config](t, Provider{}, `{"failureDomains": ["zone-a", "Zone B"]}`, "/failureDomains/1")
	capwtest.AssertFieldError(t, errors, "/failureDomains/1", "DNS label")
}
