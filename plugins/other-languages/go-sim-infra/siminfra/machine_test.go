package siminfra

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"capw.dev/sdk/go/capw"
	"capw.dev/sdk/go/capwtest"
)

func inst(state string) instance {
	return instance{ID: "i-3", ProviderID: "sim://instances/i-3", ClientToken: "key-3", Name: "c1-md-0-x",
		Zone: "zone-b", State: state, Tags: map[string]string{},
		Addresses: []apiAddress{{Kind: "private-ip", Address: "10.0.4.12"}, {Kind: "carrier-pigeon", Address: "coop 7"}}}
}

func TestStatesMapToPhases(t *testing.T) {
	for state, want := range map[string]capw.MachinePhase{"pending": capw.PhasePending, "booting": capw.PhaseProvisioning,
		"running": capw.PhaseRunning, "failed": capw.PhaseFailed, "terminating": capw.PhaseProvisioning} {
		if Phase(state) != want {
			t.Errorf("%s", state)
		}
	}
}

func TestUnsettledInstancesAreRequeued(t *testing.T) {
	s := status(inst("booting"))
	if s.Phase != capw.PhaseProvisioning || s.RequeueAfter != InstanceRequeue || s.Message != "instance i-3 is booting" ||
		s.Conditions[0].Reason != "InstanceBooting" {
		t.Fatalf("%+v", s)
	}
}

func TestARunningInstanceReportsItsIdsAndAddresses(t *testing.T) {
	s := status(inst("running"))
	if s.Phase != capw.PhaseRunning || s.RequeueAfter != 0 || s.ProviderID != "sim://instances/i-3" || s.FailureDomain != "zone-b" ||
		len(s.Addresses) != 1 || s.Addresses[0] != (capw.Address{Kind: capw.AddressInternalIP, Address: "10.0.4.12"}) ||
		s.Conditions[0].Status != capw.ConditionTrue {
		t.Fatalf("%+v", s)
	}
}

func TestAFailedInstanceSaysWhyAndARefusedCreateIsFinal(t *testing.T) {
	failed := inst("failed")
	failed.Reason = "bootstrap: no runcmd"
	if s := status(failed); s.Phase != capw.PhaseFailed || s.Message != "bootstrap: no runcmd" || s.RequeueAfter != 0 {
		t.Fatalf("%+v", s)
	}
	s := refused("client token belonged to instance i-1, which has been deleted")
	if s.Phase != capw.PhaseFailed || s.ProviderID != "" || s.Conditions[0].Reason != "CreateRefused" ||
		!strings.Contains(s.Message, "which has been deleted") {
		t.Fatalf("%+v", s)
	}
}

func TestCreateRequestIsKeyedTaggedAndEncoded(t *testing.T) {
	spec := capw.MachineSpec{Machine: capwtest.Machine("c1-cp-0"), Role: capw.RoleJoinControlPlane, Pool: "control-plane",
		Version: capwtest.Version(35), FailureDomain: "zone-a", BootstrapData: []byte("#cloud-config\n")}
	got, _ := json.Marshal(createRequest("c1", "key-9", spec, spec.FailureDomain, "large"))
	want := `{"client_token":"key-9","name":"c1-cp-0","cluster":"c1","role":"control-plane","zone":"zone-a","instance_type":"large",` +
		`"tags":{"capw.dev/cluster":"c1","capw.dev/machine":"c1-cp-0","capw.dev/pool":"control-plane"},` +
		`"bootstrap_data":"I2Nsb3VkLWNvbmZpZwo="}`
	if string(got) != want {
		t.Fatalf("%s", got)
	}
	if noZone, _ := json.Marshal(createRequest("c1", "k", spec, "", "")); strings.Contains(string(noZone), "zone") ||
		strings.Contains(string(noZone), "instance_type") {
		t.Fatalf("%s", noZone)
	}
}

func TestListedMachinesCarryKeyAndMachineName(t *testing.T) {
	tagged := inst("running")
	tagged.Tags[TagMachine] = "c1-md-0-abc"
	if l := listed(tagged); l.IdempotencyKey != "key-3" || l.ProviderID != "sim://instances/i-3" || l.MachineName != "c1-md-0-abc" ||
		l.Phase != capw.PhaseRunning {
		t.Fatalf("%+v", l)
	}
	if l := listed(inst("pending")); l.MachineName != "c1-md-0-x" {
		t.Fatalf("%+v", l)
	}
}

func TestFailureDomainsFilterInSimcloudsOrder(t *testing.T) {
	d, err := FailureDomains([]string{"a", "b", "c"}, []string{"c", "a"})
	if err != nil || len(d) != 2 || d[0].Name != "a" || d[1].Name != "c" || !d[0].ControlPlane {
		t.Fatalf("%+v %v", d, err)
	}
	_, err = FailureDomains([]string{"a", "b"}, []string{"a", "x"})
	if e := capw.AsProviderError(err); e.Code != capw.CodeInvalidInput || e.Retryable ||
		e.Message != "config `/zones`: simcloud has no zone `x`; its zones are `a`, `b`" {
		t.Fatalf("%+v", e)
	}
}

// fakeSim is a simcloud of instances only, enough for reconcile-machine: it creates by client
// token and, when lose is set, applies the next create and answers it with a 500, a lost
// response.
type fakeSim struct {
	instances []instance
	lose      bool
}

func (f *fakeSim) serve(r capwtest.SentRequest) (capw.Response, *capw.HTTPError) {
	u, _ := url.Parse(r.URL)
	switch {
	case r.Method == "GET" && u.Path == "/v1/instances":
		var out instanceList
		for _, i := range f.instances {
			if token := u.Query().Get("client_token"); token == "" || token == i.ClientToken {
				out.Instances = append(out.Instances, i)
			}
		}
		body, _ := json.Marshal(out)
		return capwtest.JSON(200, string(body)), nil
	case r.Method == "POST" && u.Path == "/v1/instances":
		var create createInstance
		_ = json.Unmarshal(r.Body, &create)
		id := fmt.Sprintf("i-%d", len(f.instances)+1)
		created := instance{ID: id, ProviderID: "sim://instances/" + id, ClientToken: create.ClientToken,
			Name: create.Name, Zone: "zone-a", State: "pending", Tags: create.Tags}
		f.instances = append(f.instances, created)
		if f.lose {
			f.lose = false
			return capwtest.JSON(500, `{"error": {"code": "internal", "message": "lost"}}`), nil
		}
		body, _ := json.Marshal(created)
		return capwtest.JSON(201, string(body)), nil
	}
	return capwtest.JSON(404, `{"error": {"code": "not_found", "message": "no route"}}`), nil
}

func TestACreateWhoseAnswerWasLostIsAnsweredNotRepeated(t *testing.T) {
	sim := &fakeSim{lose: true}
	h := capwtest.UseHost(t, &capwtest.Host{
		Secrets: map[string][]byte{"simcloud-token": []byte("t0k")},
		HTTP:    sim.serve,
	})
	ctx := capwtest.Context[Config](t, `{"endpoint": "http://sim.test:8080"}`)
	spec := capw.MachineSpec{Machine: capwtest.Machine("m1"), Role: capw.RoleWorker, Pool: "md-0"}
	_, err := Provider{}.ReconcileMachine(ctx, spec)
	if e := capw.AsProviderError(err); e.Code != capw.CodeUnavailable || !e.Retryable {
		t.Fatalf("the lost answer: %+v", e)
	}
	s, err := Provider{}.ReconcileMachine(ctx, spec)
	if err != nil || s.ProviderID != "sim://instances/i-1" || s.Phase != capw.PhasePending || len(sim.instances) != 1 {
		t.Fatalf("%+v %v %+v", s, err, sim.instances)
	}
	for _, r := range h.Sent() {
		if r.Header("authorization") != "Bearer t0k" {
			t.Fatalf("%+v", r)
		}
	}
	for _, l := range h.Logs() {
		if strings.Contains(fmt.Sprint(l), "t0k") {
			t.Fatalf("the token was logged: %+v", l)
		}
	}
	machines, err := Provider{}.ListMachines(ctx)
	if err != nil || len(machines) != 1 || machines[0].IdempotencyKey != capwtest.IdempotencyKey || machines[0].MachineName != "m1" {
		t.Fatalf("%+v %v", machines, err)
	}
}
