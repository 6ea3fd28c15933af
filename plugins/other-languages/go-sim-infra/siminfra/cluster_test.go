package siminfra

import (
	"encoding/json"
	"net/url"
	"testing"

	"capw.dev/sdk/go/capw"
	"capw.dev/sdk/go/capwtest"
)

// clusterSim is simcloud's networks, load balancers and zones for one cluster: what it
// creates is there at once, a load balancer active.
type clusterSim struct {
	networks      []network
	loadBalancers []loadBalancer
}

func (f *clusterSim) serve(r capwtest.SentRequest) (capw.Response, *capw.HTTPError) {
	u, _ := url.Parse(r.URL)
	answer := func(status int, v any) (capw.Response, *capw.HTTPError) {
		body, _ := json.Marshal(v)
		return capwtest.JSON(status, string(body)), nil
	}
	switch {
	case r.Method == "GET" && u.Path == "/v1/networks":
		return answer(200, networkList{Networks: f.networks})
	case r.Method == "POST" && u.Path == "/v1/networks":
		var create createNetwork
		_ = json.Unmarshal(r.Body, &create)
		f.networks = append(f.networks, network{ID: "net-1", Cluster: create.Cluster, Name: create.Name})
		return answer(201, f.networks[len(f.networks)-1])
	case r.Method == "GET" && u.Path == "/v1/load-balancers":
		return answer(200, loadBalancerList{LoadBalancers: f.loadBalancers})
	case r.Method == "POST" && u.Path == "/v1/load-balancers":
		var create createLoadBalancer
		_ = json.Unmarshal(r.Body, &create)
		f.loadBalancers = append(f.loadBalancers, loadBalancer{ID: "lb-1", Cluster: create.Cluster, Name: create.Name,
			Endpoint: apiEndpoint{Host: "lb-1.sim", Port: 6443}, State: lbActive})
		return answer(201, f.loadBalancers[len(f.loadBalancers)-1])
	case r.Method == "GET" && u.Path == "/v1/zones":
		return answer(200, zoneList{Zones: []string{"zone-a", "zone-b"}})
	}
	return capwtest.JSON(404, `{"error": {"code": "not_found", "message": "no route"}}`), nil
}

func reconcileCluster(t *testing.T, config string) (capw.ClusterState, *clusterSim) {
	t.Helper()
	sim := &clusterSim{}
	capwtest.UseHost(t, &capwtest.Host{Secrets: map[string][]byte{"simcloud-token": []byte("t0k")}, HTTP: sim.serve})
	state, err := Provider{}.ReconcileCluster(capwtest.Context[Config](t, config))
	if err != nil || state.Ready == nil {
		t.Fatalf("not ready: %+v %v", state, err)
	}
	return state, sim
}

func TestTheLoadBalancerIsTheEndpoint(t *testing.T) {
	state, sim := reconcileCluster(t, `{"endpoint": "http://sim.test"}`)
	if e := state.Ready.ControlPlaneEndpoint; e == nil || *e != (capw.Endpoint{Host: "lb-1.sim", Port: 6443}) {
		t.Errorf("endpoint %v", e)
	}
	if len(sim.loadBalancers) != 1 || len(state.Ready.Conditions) != 2 || len(state.Ready.FailureDomains) != 2 {
		t.Errorf("%+v %+v", state.Ready, sim)
	}
}

func TestAServicesControlPlaneGetsANetworkAndNoEndpoint(t *testing.T) {
	state, sim := reconcileCluster(t, `{"endpoint": "http://sim.test", "controlPlaneEndpoint": "none", "zones": ["zone-b"]}`)
	if state.Ready.ControlPlaneEndpoint != nil {
		t.Errorf("endpoint %v", *state.Ready.ControlPlaneEndpoint)
	}
	if len(sim.networks) != 1 || len(sim.loadBalancers) != 0 {
		t.Errorf("simcloud holds %+v", sim)
	}
	if c := state.Ready.Conditions; len(c) != 1 || c[0].Type != "NetworkReady" {
		t.Errorf("conditions %+v", c)
	}
	if d := state.Ready.FailureDomains; len(d) != 1 || d[0].Name != "zone-b" {
		t.Errorf("failure domains %+v", d)
	}
}
