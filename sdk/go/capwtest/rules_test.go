package capwtest_test

import (
	"strings"
	"testing"

	"capw.dev/sdk/go/capw"
	"capw.dev/sdk/go/capwtest"
)

// tokens keeps its join token in the item join-token, as <id>.<secret>; renewed says what
// RenewJoinToken answers.
type tokens struct {
	renewed capw.JoinToken
}

func (tokens) CurrentJoinToken(_ *capw.Context[config], secrets []capw.SecretItem) (*capw.JoinToken, error) {
	for _, item := range secrets {
		if item.Name == "join-token" {
			id, secret, _ := strings.Cut(string(item.Data), ".")
			return &capw.JoinToken{Item: item.Name, ID: id, Secret: secret}, nil
		}
	}
	return nil, nil
}

func (p tokens) RenewJoinToken(*capw.Context[config], []capw.SecretItem) (capw.JoinToken, error) {
	return p.renewed, nil
}

// stuck reads the token of the first secrets it is given, whatever it is given next.
type stuck struct{ tokens }

func (stuck) CurrentJoinToken(*capw.Context[config], []capw.SecretItem) (*capw.JoinToken, error) {
	return &capw.JoinToken{Item: "join-token", ID: "abcdef"}, nil
}

func TestAJoinTokenThatRenewsPasses(t *testing.T) {
	ctx := capwtest.Context[config](t, `{"port": 1}`)
	secrets := []capw.SecretItem{{Name: "ca.crt"}, {Name: "join-token", Data: []byte("abcdef.0123456789abcdef")}}
	renewed := capwtest.AssertJoinTokenRenews[config](t, tokens{capw.JoinToken{Item: "join-token", ID: "ghijkl", Secret: "x"}}, ctx, secrets)
	if renewed == nil || renewed.ID != "ghijkl" {
		t.Errorf("%v", renewed)
	}
	if capwtest.AssertJoinTokenRenews[config](t, tokens{}, ctx, secrets[:1]) != nil {
		t.Error("no token, nothing renewed")
	}
}

func TestAJoinTokenThatDoesNotRenewFails(t *testing.T) {
	ctx := capwtest.Context[config](t, `{"port": 1}`)
	secrets := []capw.SecretItem{{Name: "join-token", Data: []byte("abcdef.0123456789abcdef")}}
	r := &recorder{TB: t}
	// The same id again, in another item: two failures.
	capwtest.AssertJoinTokenRenews[config](r, tokens{capw.JoinToken{Item: "other", ID: "abcdef"}}, ctx, secrets)
	// current-join-token that names the old token still once the renewed one is stored.
	capwtest.AssertJoinTokenRenews[config](r, stuck{tokens{capw.JoinToken{Item: "join-token", ID: "ghijkl"}}}, ctx, secrets)
	if len(r.failed) != 3 {
		t.Errorf("%d failures: %q", len(r.failed), r.failed)
	}
}

func TestADeletedMemberEtcdListsFails(t *testing.T) {
	input := capw.PlanInput{Members: []capw.Member{
		capwtest.Member("in", 35, 1, capw.EtcdMember),
		capwtest.Member("out", 35, 2, capw.EtcdNotMember),
	}}
	capwtest.AssertStepKeepsEtcd(t, input, capw.Step{Kind: capw.StepRemoveEtcdMember, Machine: capwtest.Machine("in")})
	capwtest.AssertStepKeepsEtcd(t, input, capw.Step{Kind: capw.StepDeleteMachine, Machine: capwtest.Machine("out")})
	capwtest.AssertStepKeepsEtcd(t, input, capw.Step{Kind: capw.StepNone})
	r := &recorder{TB: t}
	capwtest.AssertStepKeepsEtcd(r, input, capw.Step{Kind: capw.StepDeleteMachine, Machine: capwtest.Machine("in")})
	capwtest.AssertStepKeepsEtcd(r, input, capw.Step{Kind: capw.StepRemoveEtcdMember, Machine: capwtest.Machine("gone")})
	if len(r.failed) != 2 {
		t.Errorf("%d failures: %q", len(r.failed), r.failed)
	}
}
