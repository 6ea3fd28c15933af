package main

import (
	"testing"

	"capw.dev/sdk/go/capw"
	"capw.dev/sdk/go/capwtest"
)

func member(name string, ready bool, createdAt uint64) capw.Member {
	return capw.Member{Machine: capwtest.Machine(name), Version: capwtest.Version(35), Ready: ready, CreatedAt: createdAt}
}

func plan(t *testing.T, replicas uint32, members ...capw.Member) capw.Step {
	t.Helper()
	ctx := capwtest.Context[Config](t, `{}`)
	out, err := Provider{}.Plan(ctx, capw.PlanInput{
		Version:        capwtest.Version(35),
		Replicas:       replicas,
		Members:        members,
		FailureDomains: []string{"a", "b"},
	})
	if err != nil {
		t.Fatal(err)
	}
	return out.Step
}

func TestScalesUpOneReadyMachineAtATime(t *testing.T) {
	if step := plan(t, 3); step.Kind != capw.StepCreateMachine || !step.Create.Init {
		t.Errorf("no members: %+v", step)
	}
	if step := plan(t, 3, member("m-0", false, 1)); step.Kind != capw.StepWait {
		t.Errorf("one member not ready: %+v", step)
	}
	step := plan(t, 3, member("m-0", true, 1))
	if step.Kind != capw.StepCreateMachine || step.Create.Init || step.Create.FailureDomain != "b" {
		t.Errorf("one member ready: %+v", step)
	}
}

func TestScalesDownTheOldestFirst(t *testing.T) {
	step := plan(t, 1, member("new", true, 2), member("old", true, 1))
	if step.Kind != capw.StepDeleteMachine || step.Machine.Name != "old" {
		t.Errorf("%+v", step)
	}
}

func TestAMemberEtcdListsLeavesEtcdBeforeItsMachineGoes(t *testing.T) {
	members := []capw.Member{
		capwtest.Member("new", 35, 2, capw.EtcdMember),
		capwtest.Member("old", 35, 1, capw.EtcdMember),
	}
	step := plan(t, 1, members...)
	if step.Kind != capw.StepRemoveEtcdMember || step.Machine.Name != "old" {
		t.Errorf("%+v", step)
	}
	capwtest.AssertStepKeepsEtcd(t, capw.PlanInput{Members: members}, step)
}

func TestAnEvenMaximumIsRefused(t *testing.T) {
	errors := capwtest.AssertRefusedAt[Config](t, Provider{}, `{"maxReplicas": 4}`, "/maxReplicas")
	capwtest.AssertFieldError(t, errors, "/maxReplicas", "must be odd")
}
