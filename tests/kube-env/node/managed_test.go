package main

import (
	"strings"
	"testing"
	"time"
)

func TestTheWantedFileNamesAVersionAndItsBinaries(t *testing.T) {
	w, err := parseWanted("v1.35.4 /cache/v1.35.4/bin\n")
	if err != nil {
		t.Fatal(err)
	}
	if w != (wantedVersion{Version: "v1.35.4", BinDir: "/cache/v1.35.4/bin"}) {
		t.Fatalf("got %+v", w)
	}
	for _, bad := range []string{"", "v1.35.4", "1.35.4 /bin", "v1.35.4 /bin extra"} {
		if _, err := parseWanted(bad); err == nil {
			t.Errorf("%q was accepted", bad)
		}
	}
}

func TestTokensAreReadWithTheirExpiryAndNeverQuotedInErrors(t *testing.T) {
	tokens, err := parseTokens("abcdef.0123456789abcdef 1767225600\n\n")
	if err != nil {
		t.Fatal(err)
	}
	if len(tokens) != 1 || tokens[0].Token != "abcdef.0123456789abcdef" || !tokens[0].Expires.Equal(time.Unix(1767225600, 0)) {
		t.Fatalf("got %+v", tokens)
	}
	bts, err := kubeadmTokens(tokens)
	if err != nil {
		t.Fatal(err)
	}
	if bts[0].Token.ID != "abcdef" || bts[0].Expires == nil || len(bts[0].Groups) != 1 || bts[0].Groups[0] != "system:bootstrappers:kubeadm:default-node-token" {
		t.Fatalf("got %+v", bts[0])
	}
	_, err = parseTokens("ABCDEF.0123456789abcdeX 1\n")
	if err == nil || strings.Contains(err.Error(), "ABCDEF") {
		t.Fatalf("a malformed token must be refused without being quoted: %v", err)
	}
	if _, err := parseTokens("abcdef.0123456789abcdef soon\n"); err == nil {
		t.Fatal("a bad expiry was accepted")
	}
}

func TestTheServicesConfigurationIsAControlPlaneAtItsEndpointWithoutANode(t *testing.T) {
	s := managedService{Root: "/m/mcp-3", Address: "127.4.5.6", Port: 6443, Cluster: "m1"}
	if err := s.validate(); err != nil {
		t.Fatal(err)
	}
	m := s.machine("/bin/v1.34.4")
	if m.Name != "mcp-3" || !m.isControlPlane() {
		t.Fatalf("got %+v", m)
	}
	init, cluster := managedKubeadmDocs(s, "v1.34.4")
	cfg, err := deriveMachineConfig(m, init, nil, cluster, nil, "v1.34.4")
	if err != nil {
		t.Fatal(err)
	}
	st := cfg.Settings
	if st.ClusterName != "m1" || st.ControlPlaneEndpoint != "127.4.5.6:6443" || st.KubernetesVersion != "v1.34.4" || st.PodSubnet != managedPodSubnet || st.BindPort != 6443 {
		t.Fatalf("got %+v", st)
	}
	for _, bad := range []managedService{
		{Root: "", Address: "127.0.0.2", Port: 6443, Cluster: "m1"},
		{Root: "/m", Address: "::1", Port: 6443, Cluster: "m1"},
		{Root: "/m", Address: "127.0.0.2", Port: 0, Cluster: "m1"},
		{Root: "/m", Address: "127.0.0.2", Port: 6443, Cluster: ""},
	} {
		if bad.validate() == nil {
			t.Errorf("%+v was accepted", bad)
		}
	}
}
