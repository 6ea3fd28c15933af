package main

import (
	"bytes"
	"fmt"
	"net"
	"regexp"
	"strconv"
	"strings"

	"sigs.k8s.io/yaml"
)

// kubeadmDoc is one document of a kubeadm configuration file, kept as a generic object so that
// fields the agent does not touch reach kubeadm unchanged (kubeadm is the judge of them).
type kubeadmDoc map[string]interface{}

func (d kubeadmDoc) kind() string { s, _ := d["kind"].(string); return s }

// child returns the object at key, creating it when absent.
func (d kubeadmDoc) child(key string) kubeadmDoc {
	if m, ok := d[key].(map[string]interface{}); ok {
		return m
	}
	m := map[string]interface{}{}
	d[key] = m
	return m
}

func (d kubeadmDoc) str(path ...string) string {
	cur := map[string]interface{}(d)
	for i, k := range path {
		v, ok := cur[k]
		if !ok {
			return ""
		}
		if i == len(path)-1 {
			switch t := v.(type) {
			case string:
				return t
			case float64:
				return strconv.FormatFloat(t, 'f', -1, 64)
			default:
				return fmt.Sprint(t)
			}
		}
		next, ok := v.(map[string]interface{})
		if !ok {
			return ""
		}
		cur = next
	}
	return ""
}

var docSeparator = regexp.MustCompile(`(?m)^---[ \t]*$`)

// parseKubeadmDocs splits a multi-document YAML file into its non-empty documents.
func parseKubeadmDocs(data []byte) ([]kubeadmDoc, error) {
	var docs []kubeadmDoc
	for i, part := range docSeparator.Split(string(data), -1) {
		if strings.TrimSpace(part) == "" {
			continue
		}
		var d kubeadmDoc
		if err := yaml.Unmarshal([]byte(part), &d); err != nil {
			return nil, fmt.Errorf("document %d: %w", i+1, err)
		}
		if d == nil {
			continue
		}
		docs = append(docs, d)
	}
	return docs, nil
}

func marshalKubeadmDocs(docs []kubeadmDoc) ([]byte, error) {
	var buf bytes.Buffer
	for i, d := range docs {
		if i > 0 {
			buf.WriteString("---\n")
		}
		b, err := yaml.Marshal(d)
		if err != nil {
			return nil, err
		}
		buf.Write(b)
	}
	return buf.Bytes(), nil
}

func findDoc(docs []kubeadmDoc, kind string) kubeadmDoc {
	for _, d := range docs {
		if d.kind() == kind {
			return d
		}
	}
	return nil
}

// extraArg is one entry of a v1beta4 extraArgs list.
type extraArg struct{ Name, Value string }

// clusterSettings are what the components' flags need from the ClusterConfiguration, with
// kubeadm's defaults filled in.
type clusterSettings struct {
	ClusterName          string
	KubernetesVersion    string
	ControlPlaneEndpoint string
	ServiceSubnet        string
	PodSubnet            string
	DNSDomain            string
	BindPort             int
	APIServerExtraArgs   []extraArg
	ControllerExtraArgs  []extraArg
	SchedulerExtraArgs   []extraArg
	EtcdExtraArgs        []extraArg
}

func extraArgs(d kubeadmDoc, path ...string) []extraArg {
	cur := map[string]interface{}(d)
	for _, k := range path {
		next, ok := cur[k].(map[string]interface{})
		if !ok {
			return nil
		}
		cur = next
	}
	list, _ := cur["extraArgs"].([]interface{})
	var out []extraArg
	for _, item := range list {
		if m, ok := item.(map[string]interface{}); ok {
			name, _ := m["name"].(string)
			value, _ := m["value"].(string)
			if name != "" {
				out = append(out, extraArg{name, value})
			}
		}
	}
	return out
}

// derivedConfig is this machine's kubeadm configuration: the documents kubeadm's phases read,
// and the settings the components' flags are built from.
type derivedConfig struct {
	Docs     []kubeadmDoc
	Settings clusterSettings
}

// deriveMachineConfig makes this machine's InitConfiguration + ClusterConfiguration from the
// cluster's: the certificates and etcd data under the machine directory, the API server
// advertised on the machine's address, the node named --name. init is the InitConfiguration of
// the bootstrap data (nil for a joining control plane, whose nodeRegistration and bindPort come
// from its JoinConfiguration instead).
func deriveMachineConfig(m machine, init, join, cluster kubeadmDoc, others []kubeadmDoc, version string) (derivedConfig, error) {
	if cluster == nil {
		return derivedConfig{}, fmt.Errorf("no ClusterConfiguration")
	}
	if _, external := cluster.child("etcd")["external"]; external {
		return derivedConfig{}, fmt.Errorf("the ClusterConfiguration names an external etcd; only stacked (local) etcd is supported")
	}
	if init == nil {
		init = kubeadmDoc{"apiVersion": cluster["apiVersion"], "kind": "InitConfiguration"}
		if join != nil {
			if nr, ok := join["nodeRegistration"].(map[string]interface{}); ok {
				init["nodeRegistration"] = nr
			}
			if port := join.str("controlPlane", "localAPIEndpoint", "bindPort"); port != "" {
				init.child("localAPIEndpoint")["bindPort"] = mustAtoi(port)
			}
		}
	}
	endpoint := init.child("localAPIEndpoint")
	endpoint["advertiseAddress"] = m.Address
	if _, ok := endpoint["bindPort"]; !ok {
		endpoint["bindPort"] = 6443
	}
	nr := init.child("nodeRegistration")
	nr["name"] = m.Name
	if _, ok := nr["criSocket"]; !ok {
		// Set so that kubeadm does not look for a container runtime; none runs here.
		nr["criSocket"] = "unix:///var/run/containerd/containerd.sock"
	}

	cluster["certificatesDir"] = m.pkiDir()
	cluster.child("etcd").child("local")["dataDir"] = m.etcdDataDir()
	if cluster.str("kubernetesVersion") == "" {
		// Without it kubeadm would ask the internet for the latest release.
		cluster["kubernetesVersion"] = version
	}

	s := clusterSettings{
		ClusterName:          cluster.str("clusterName"),
		KubernetesVersion:    cluster.str("kubernetesVersion"),
		ControlPlaneEndpoint: cluster.str("controlPlaneEndpoint"),
		ServiceSubnet:        cluster.str("networking", "serviceSubnet"),
		PodSubnet:            cluster.str("networking", "podSubnet"),
		DNSDomain:            cluster.str("networking", "dnsDomain"),
		BindPort:             mustAtoi(init.str("localAPIEndpoint", "bindPort")),
		APIServerExtraArgs:   extraArgs(cluster, "apiServer"),
		ControllerExtraArgs:  extraArgs(cluster, "controllerManager"),
		SchedulerExtraArgs:   extraArgs(cluster, "scheduler"),
		EtcdExtraArgs:        extraArgs(cluster, "etcd", "local"),
	}
	if s.ClusterName == "" {
		s.ClusterName = "kubernetes"
	}
	if s.ServiceSubnet == "" {
		s.ServiceSubnet = "10.96.0.0/12"
	}
	if s.DNSDomain == "" {
		s.DNSDomain = "cluster.local"
	}
	if s.BindPort == 0 {
		s.BindPort = 6443
	}
	if s.ControlPlaneEndpoint == "" {
		s.ControlPlaneEndpoint = net.JoinHostPort(m.Address, strconv.Itoa(s.BindPort))
	}
	// Explicit, so that kubeadm does not default it from the advertise address.
	cluster["controlPlaneEndpoint"] = s.ControlPlaneEndpoint
	docs := []kubeadmDoc{init, cluster}
	for _, d := range others {
		switch d.kind() {
		case "InitConfiguration", "ClusterConfiguration", "JoinConfiguration":
		default:
			docs = append(docs, d)
		}
	}
	return derivedConfig{Docs: docs, Settings: s}, nil
}

func mustAtoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

// tokenDiscovery is the bootstrap-token discovery of a JoinConfiguration.
type tokenDiscovery struct {
	Token                    string
	APIServerEndpoint        string
	CACertHashes             []string
	UnsafeSkipCAVerification bool
	TLSBootstrapToken        string
}

func joinDiscovery(join kubeadmDoc) (tokenDiscovery, error) {
	if join == nil {
		return tokenDiscovery{}, fmt.Errorf("no JoinConfiguration")
	}
	disc := join.child("discovery")
	bt, ok := disc["bootstrapToken"].(map[string]interface{})
	if !ok {
		return tokenDiscovery{}, fmt.Errorf("the JoinConfiguration has no discovery.bootstrapToken (only token discovery is supported)")
	}
	d := tokenDiscovery{
		Token:             kubeadmDoc(bt).str("token"),
		APIServerEndpoint: kubeadmDoc(bt).str("apiServerEndpoint"),
		TLSBootstrapToken: kubeadmDoc(disc).str("tlsBootstrapToken"),
	}
	d.UnsafeSkipCAVerification, _ = bt["unsafeSkipCAVerification"].(bool)
	if hashes, ok := bt["caCertHashes"].([]interface{}); ok {
		for _, h := range hashes {
			if s, ok := h.(string); ok {
				d.CACertHashes = append(d.CACertHashes, s)
			}
		}
	}
	if d.TLSBootstrapToken == "" {
		d.TLSBootstrapToken = d.Token
	}
	if d.Token == "" || d.APIServerEndpoint == "" {
		return tokenDiscovery{}, fmt.Errorf("the JoinConfiguration's discovery.bootstrapToken needs token and apiServerEndpoint")
	}
	if len(d.CACertHashes) == 0 && !d.UnsafeSkipCAVerification {
		return tokenDiscovery{}, fmt.Errorf("the JoinConfiguration's discovery.bootstrapToken has no caCertHashes and unsafeSkipCAVerification is not set")
	}
	return d, nil
}
