package capwtest

import (
	"testing"

	"capw.dev/sdk/go/capw"
)

// AssertJoinTokenRenews checks what the host relies on to keep a bootstrap provider's join
// token valid (conformance rule bootstrap.join-token.renews): CurrentJoinToken answers nil,
// or a token in an item of secrets; RenewJoinToken then answers a token with a new ID for the
// same item, which CurrentJoinToken names once it is stored there. It returns the renewed
// token (nil when there was none to renew).
func AssertJoinTokenRenews[C any](t testing.TB, p capw.JoinTokens[C], ctx *capw.Context[C], secrets []capw.SecretItem) *capw.JoinToken {
	t.Helper()
	current, err := p.CurrentJoinToken(ctx, secrets)
	if err != nil {
		t.Errorf("current-join-token: %v", err)
		return nil
	}
	if current == nil {
		return nil
	}
	if !hasItem(secrets, current.Item) {
		t.Errorf("current-join-token names item %q, which the cluster's secrets do not have", current.Item)
	}
	renewed, err := p.RenewJoinToken(ctx, secrets)
	if err != nil {
		t.Errorf("renew-join-token: %v", err)
		return nil
	}
	if renewed.Item != current.Item {
		t.Errorf("renew-join-token answered item %q, current-join-token names %q", renewed.Item, current.Item)
	}
	if renewed.ID == current.ID {
		t.Errorf("renew-join-token answered the current token's id %s", current.ID)
	}
	stored := []capw.SecretItem{}
	for _, item := range secrets {
		if item.Name != renewed.Item {
			stored = append(stored, item)
		}
	}
	stored = append(stored, capw.SecretItem{Name: renewed.Item, Data: []byte(renewed.Token())})
	named, err := p.CurrentJoinToken(ctx, stored)
	switch {
	case err != nil:
		t.Errorf("current-join-token with the renewed token stored: %v", err)
	case named == nil:
		t.Errorf("with the renewed token %s stored, current-join-token names none", renewed.ID)
	case named.ID != renewed.ID:
		t.Errorf("with the renewed token %s stored, current-join-token names %s", renewed.ID, named.ID)
	}
	return &renewed
}

func hasItem(items []capw.SecretItem, name string) bool {
	for _, item := range items {
		if item.Name == name {
			return true
		}
	}
	return false
}

// AssertStepKeepsEtcd checks that the step a plan answered for input takes no member out
// behind etcd's back (conformance rule control-plane.plan.etcd-members): a machine it deletes
// or takes out of etcd is one of the members, and delete-machine is never the step for a
// member etcd lists ([capw.EtcdMember]), which leaves through remove-etcd-member.
func AssertStepKeepsEtcd(t testing.TB, input capw.PlanInput, step capw.Step) {
	t.Helper()
	if step.Kind != capw.StepDeleteMachine && step.Kind != capw.StepRemoveEtcdMember {
		return
	}
	for _, m := range input.Members {
		if m.Machine.Name != step.Machine.Name {
			continue
		}
		if step.Kind == capw.StepDeleteMachine && m.Etcd == capw.EtcdMember {
			t.Errorf("delete-machine for %s, which etcd lists: answer remove-etcd-member for it first", m.Machine.Name)
		}
		return
	}
	t.Errorf("the plan takes out %s, which is not one of the members", step.Machine.Name)
}

// Member is a ready control-plane member running v1.minor.0, created at createdAt, in etcd
// as etcd says; change its other fields as the test needs.
func Member(name string, minor uint32, createdAt uint64, etcd capw.EtcdMembership) capw.Member {
	return capw.Member{Machine: Machine(name), Version: Version(minor), Ready: true, CreatedAt: createdAt, Etcd: etcd}
}
