package capw_test

import (
	"strings"
	"testing"

	"capw.dev/sdk/go/capw"
)

func member(name string, etcd capw.EtcdMembership, minor uint32) capw.Member {
	return capw.Member{
		Machine: capw.MachineRef{Name: name, UID: "uid-" + name},
		Version: capw.KubernetesVersion{Major: 1, Minor: minor},
		Etcd:    etcd,
	}
}

func TestAMemberEtcdListsLeavesThroughEtcd(t *testing.T) {
	for _, c := range []struct {
		etcd capw.EtcdMembership
		want capw.StepKind
	}{{capw.EtcdMember, capw.StepRemoveEtcdMember}, {capw.EtcdNotMember, capw.StepDeleteMachine}, {capw.EtcdUnknown, capw.StepDeleteMachine}} {
		step := capw.RemoveMember(member("m-0", c.etcd, 35))
		if step.Kind != c.want || step.Machine.Name != "m-0" {
			t.Errorf("%s: %+v", c.etcd, step)
		}
	}
	names := []string{capw.EtcdUnknown.String(), capw.EtcdMember.String(), capw.EtcdNotMember.String()}
	if strings.Join(names, ",") != "unknown,member,not-member" {
		t.Errorf("%v", names)
	}
}

func TestTheOldestVersionIsWhatAControlPlaneRuns(t *testing.T) {
	if capw.OldestVersion(nil) != nil {
		t.Error("a version without members")
	}
	v := capw.OldestVersion([]capw.Member{member("a", capw.EtcdMember, 35), member("b", capw.EtcdMember, 34), member("c", capw.EtcdMember, 36)})
	if v == nil || *v != (capw.KubernetesVersion{Major: 1, Minor: 34}) {
		t.Errorf("%v", v)
	}
	older := capw.KubernetesVersion{Major: 1, Minor: 35, Patch: 1}
	newer := capw.KubernetesVersion{Major: 1, Minor: 35, Patch: 2}
	if older.Compare(newer) != -1 || newer.Compare(older) != 1 || older.Compare(older) != 0 ||
		(capw.KubernetesVersion{Major: 2}).Compare(newer) != 1 {
		t.Error("Compare")
	}
}

func TestAMemberIsUpToDateWhenNothingIsOutOfDate(t *testing.T) {
	m := member("a", capw.EtcdMember, 35)
	if !m.UpToDate() {
		t.Error("up to date")
	}
	m.OutOfDate = []string{"version"}
	if m.UpToDate() {
		t.Error("out of date")
	}
}
