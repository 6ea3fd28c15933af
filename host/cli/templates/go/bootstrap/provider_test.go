package main

import (
	"strings"
	"testing"

	"capw.dev/sdk/go/capw"
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

func TestAWorkerOfAServicesControlPlaneJoinsWithoutSecrets(t *testing.T) {
	ctx := capwtest.Context[Config](t, `{}`)
	token := capw.JoinToken{ID: "abcdef", Secret: "0123456789abcdef"}
	data, err := Provider{}.Generate(ctx, capw.BootstrapRequest{
		Machine: capwtest.Machine("md-0-a"),
		Role:    capw.RoleWorker,
		Version: capwtest.Version(35),
		Join:    &capw.JoinCredentials{CACertificate: "-----BEGIN CERTIFICATE-----", Token: &token},
	})
	if err != nil || !strings.Contains(string(data.Data), "# join token: abcdef\n") {
		t.Fatalf("%s, %v", data.Data, err)
	}
}
