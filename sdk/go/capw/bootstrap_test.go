package capw_test

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"capw.dev/sdk/go/capw"
)

func TestAJoinTokenPrintsWithoutItsSecret(t *testing.T) {
	token := capw.JoinToken{Item: "bootstrap-token", ID: "abcdef", Secret: "0123456789abcdef", TTL: time.Hour}
	if token.Token() != "abcdef.0123456789abcdef" {
		t.Errorf("token %q", token.Token())
	}
	for _, format := range []string{"%v", "%+v", "%#v", "%s"} {
		printed := fmt.Sprintf(format, token)
		if strings.Contains(printed, token.Secret) || !strings.Contains(printed, "abcdef") {
			t.Errorf("%s: %s", format, printed)
		}
	}
	if printed := fmt.Sprintf("%+v", capw.JoinCredentials{Token: &token}); strings.Contains(printed, token.Secret) {
		t.Errorf("credentials: %s", printed)
	}
}

func TestALifetimeIsCarriedInWholeSecondsNeverRoundedToForever(t *testing.T) {
	for _, c := range []struct {
		d    time.Duration
		want uint64
	}{{0, 0}, {-time.Second, 0}, {time.Millisecond, 1}, {time.Second, 1}, {1500 * time.Millisecond, 2}, {24 * time.Hour, 86400}} {
		if got := capw.Seconds(c.d); got != c.want {
			t.Errorf("Seconds(%s) = %d, want %d", c.d, got, c.want)
		}
	}
	if capw.FromSeconds(86400) != 24*time.Hour || capw.FromSeconds(0) != 0 {
		t.Error("FromSeconds")
	}
	if capw.FromSeconds(math.MaxUint64) != time.Duration(math.MaxInt64) {
		t.Error("FromSeconds does not saturate")
	}
}

// provider is a bootstrap provider that keeps every default, and a machines control plane.
type provider struct {
	capw.UnsupportedBootstrap[struct{}]
	capw.UnsupportedControlPlane[struct{}]
}

func (provider) Describe() capw.Description { return capw.Description{Name: "defaults"} }

func (provider) ControlPlaneCapabilities() capw.ControlPlaneCapabilities {
	return capw.ControlPlaneCapabilities{Shape: capw.ShapeMachines}
}

func TestTheDefaultsAreTheContractsOnes(t *testing.T) {
	var p provider
	var _ capw.JoinTokens[struct{}] = p
	var _ capw.ManagedControlPlane[struct{}] = p
	var _ capw.ControlPlane[struct{}] = p
	if token, err := p.CurrentJoinToken(nil, nil); token != nil || err != nil {
		t.Errorf("current-join-token: %v %v", token, err)
	}
	unsupported := func(what string, err error) {
		t.Helper()
		e := capw.AsProviderError(err)
		if e.Code != capw.CodeUnsupported || e.Retryable || !strings.Contains(e.Message, what) {
			t.Errorf("%s: %+v", what, e)
		}
	}
	_, err := p.RenewJoinToken(nil, nil)
	unsupported("bootstrap.renew-join-token", err)
	_, err = p.Plan(nil, capw.PlanInput{})
	unsupported("control-plane.plan", err)
	_, err = p.ReconcileControlPlane(nil, capw.PlanInput{})
	unsupported("control-plane.reconcile-control-plane", err)
	_, err = p.DeleteControlPlane(nil)
	unsupported("control-plane.delete-control-plane", err)
}
