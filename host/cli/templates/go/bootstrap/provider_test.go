package main

import (
	"testing"

	"capw.dev/sdk/go/capwtest"
)

func TestTheTokenIsMadeOncePerCluster(t *testing.T) {
	ctx := capwtest.Context[Config](t, `{}`)
	state, err := Provider{}.ClusterSecrets(ctx)
	if err != nil || state.InProgress != nil {
		t.Fatalf("not ready: %+v, %v", state, err)
	}
	item := state.Items[0]
	if item.Name != token || string(item.Data) != "token:"+ctx.Cluster().UID {
		t.Errorf("got %s = %q", item.Name, item.Data)
	}
}

func TestABadPackageIsNamed(t *testing.T) {
	errors := capwtest.AssertRefusedAt[Config](t, Provider{}, `{"packages": ["curl", "Bad Name"]}`, "/packages/1")
	capwtest.AssertFieldError(t, errors, "/packages/1", "Debian package")
}
