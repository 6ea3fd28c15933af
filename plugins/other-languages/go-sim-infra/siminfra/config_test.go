package siminfra

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"capw.dev/sdk/go/capw"
	"capw.dev/sdk/go/capwtest"
)

func TestOnlyTheEndpointIsRequired(t *testing.T) {
	c := capwtest.Context[Config](t, `{"endpoint": "http://127.0.0.1:8080/"}`).Config
	if c.TokenSecret != "simcloud-token" || c.RequestTimeout() != 5*time.Second || c.BaseURL() != "http://127.0.0.1:8080" {
		t.Fatalf("%+v", c)
	}
	capwtest.AssertRefusedAt[Config](t, Provider{}, `{}`, "")
}

func TestDescribeSaysInfrastructureOnlyAndAsksForTheToken(t *testing.T) {
	d := Provider{}.Describe()
	if d.Name != "go-sim-infra" || len(d.RequestedGrants.Secrets) != 1 || d.RequestedGrants.Secrets[0] != "simcloud-token" {
		t.Fatalf("%+v", d)
	}
	points := capw.Points[Config](Provider{})
	if len(points) != 1 || points[0] != capw.PointInfrastructure {
		t.Fatalf("%v", points)
	}
	capwtest.ConfigSchema[Config](t, Provider{})
}

func TestAcceptsGoodEndpoints(t *testing.T) {
	for _, endpoint := range []string{"http://127.0.0.1:8080", "https://sim.example.test",
		"HTTPS://sim.example.test:443/api/", "http://[::1]:8080", "http://[::1]"} {
		capwtest.AssertAccepted[Config](t, Provider{}, fmt.Sprintf(`{"endpoint": %q}`, endpoint))
	}
}

func TestRefusesBadEndpointsAtTheirPath(t *testing.T) {
	for _, endpoint := range []string{"127.0.0.1:8080", "ftp://sim", "http://", "http://:8080",
		"http://u:p@sim", "http://sim/?x=1", "http://sim#f", "http://sim:port", "http://si m"} {
		capwtest.AssertRefusedAt[Config](t, Provider{}, fmt.Sprintf(`{"endpoint": %q}`, endpoint), "/endpoint")
	}
}

func TestReportsEveryProblem(t *testing.T) {
	capwtest.AssertRefusedAt[Config](t, Provider{},
		`{"endpoint": "sim", "tokenSecret": " ", "zones": ["a", "", "a"], "requestTimeoutMs": 5}`,
		"/endpoint", "/tokenSecret", "/zones/1", "/zones/2")
	capwtest.AssertRefusedAt[Config](t, Provider{}, `{"endpoint": "http://sim", "requestTimeoutMs": 0}`, "/requestTimeoutMs")
}

func TestTheInstanceTypeIsAPlainNameAndTheOnlyFieldThatShapesAMachine(t *testing.T) {
	capwtest.AssertAccepted[Config](t, Provider{}, `{"endpoint": "http://sim", "instanceType": "large-2"}`)
	for _, bad := range []string{"Large", "a b", "a/b"} {
		capwtest.AssertRefusedAt[Config](t, Provider{}, fmt.Sprintf(`{"endpoint": "http://sim", "instanceType": %q}`, bad), "/instanceType")
	}
	var schema struct {
		Properties map[string]map[string]any `json:"properties"`
	}
	if err := json.Unmarshal([]byte(configSchema), &schema); err != nil {
		t.Fatal(err)
	}
	for field, property := range schema.Properties {
		if shapes := property["x-capw-shapes-machine"]; shapes != (field == "instanceType") {
			t.Errorf("%s: x-capw-shapes-machine is %v", field, shapes)
		}
	}
}

func TestTheControlPlaneEndpointIsALoadBalancerUnlessItSaysNone(t *testing.T) {
	capwtest.AssertAccepted[Config](t, Provider{}, `{"endpoint": "http://sim", "controlPlaneEndpoint": "none"}`)
	capwtest.AssertAccepted[Config](t, Provider{}, `{"endpoint": "http://sim", "controlPlaneEndpoint": "loadBalancer"}`)
	capwtest.AssertRefusedAt[Config](t, Provider{}, `{"endpoint": "http://sim", "controlPlaneEndpoint": "nodePort"}`, "/controlPlaneEndpoint")
	var c Config
	c.SetDefaults()
	if c.ControlPlaneEndpoint != EndpointLoadBalancer {
		t.Errorf("default controlPlaneEndpoint is %q", c.ControlPlaneEndpoint)
	}
	ready := ReadyWithoutEndpoint(nil, capw.Condition{Type: "NetworkReady", Status: capw.ConditionTrue})
	if ready.Ready == nil || ready.Ready.ControlPlaneEndpoint != nil || len(ready.Ready.Conditions) != 1 {
		t.Errorf("not ready without an endpoint: %+v", ready)
	}
}

func TestTypeErrorsAndUnknownFieldsAreRefused(t *testing.T) {
	capwtest.AssertRefusedAt[Config](t, Provider{}, `{"endpoint": "http://sim", "requestTimeoutMs": "5"}`, "/requestTimeoutMs")
	capwtest.AssertRefusedAt[Config](t, Provider{}, `{"endpoint": "http://sim", "zones": [1]}`, "/zones/0")
	capwtest.AssertRefusedAt[Config](t, Provider{}, `{"endpoint": "http://sim", "token": "x"}`, "/token")
}

func TestNamesAndTokensAreDerivedPerResource(t *testing.T) {
	if SimCluster(capwtest.Cluster("default", "c1")) != "c1" || SimCluster(capwtest.Cluster("", "c1")) != "c1" ||
		SimCluster(capwtest.Cluster("team-a", "c1")) != "team-a.c1" {
		t.Fatal("sim cluster names")
	}
	if NetworkToken("k1") != "k1-net" || LoadBalancerToken("k1") != "k1-lb" ||
		NetworkName("c1") != "c1-net" || LoadBalancerName("c1") != "c1-lb" {
		t.Fatal("tokens and names")
	}
}
