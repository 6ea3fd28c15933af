package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	kubeadmapi "k8s.io/kubernetes/cmd/kubeadm/app/apis/kubeadm"
	"k8s.io/kubernetes/cmd/kubeadm/app/discovery"
)

// discoveryTimeout bounds how long a joining machine waits for a valid cluster-info: the
// endpoint may not route to a control plane yet when the machine boots.
const discoveryTimeout = 5 * time.Minute

// discoverCluster does kubeadm join's token discovery with kubeadm's own code: it fetches
// cluster-info through the endpoint, checks its JWS signature with the token and pins the CA
// with the CA hashes, and returns a kubeconfig that authenticates with the bootstrap token.
func discoverCluster(d tokenDiscovery) (*clientcmdapi.Config, error) {
	cfg := &kubeadmapi.JoinConfiguration{
		Discovery: kubeadmapi.Discovery{
			BootstrapToken: &kubeadmapi.BootstrapTokenDiscovery{
				Token:                    d.Token,
				APIServerEndpoint:        d.APIServerEndpoint,
				CACertHashes:             d.CACertHashes,
				UnsafeSkipCAVerification: d.UnsafeSkipCAVerification,
			},
			TLSBootstrapToken: d.TLSBootstrapToken,
		},
		Timeouts: &kubeadmapi.Timeouts{Discovery: &metav1.Duration{Duration: discoveryTimeout}},
	}
	kc, err := discovery.For(nil, cfg)
	if err != nil {
		return nil, fmt.Errorf("token discovery through %s: %w", d.APIServerEndpoint, err)
	}
	return kc, nil
}

// clientFromKubeconfig builds a client from a kubeconfig, with its server replaced when server
// is not empty (the agent talks to its own API server before the load balancer routes to it).
func restConfigFromFile(path, server string) (*rest.Config, error) {
	overrides := &clientcmd.ConfigOverrides{}
	if server != "" {
		overrides.ClusterInfo.Server = server
	}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		&clientcmd.ClientConfigLoadingRules{ExplicitPath: path}, overrides).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("loading kubeconfig %s: %w", path, err)
	}
	return cfg, nil
}

func clientFromFile(path, server string) (kubernetes.Interface, error) {
	cfg, err := restConfigFromFile(path, server)
	if err != nil {
		return nil, err
	}
	return kubernetes.NewForConfig(cfg)
}

// writeKubeconfigWithServer writes a copy of the kubeconfig at src whose clusters name server.
func writeKubeconfigWithServer(src, dst, server string) error {
	kc, err := clientcmd.LoadFromFile(src)
	if err != nil {
		return fmt.Errorf("loading kubeconfig %s: %w", src, err)
	}
	for _, c := range kc.Clusters {
		c.Server = server
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		return err
	}
	return clientcmd.WriteToFile(*kc, dst)
}

// fetchClusterConfiguration reads the ClusterConfiguration kubeadm uploaded to
// kube-system/kubeadm-config (readable with a bootstrap token).
func fetchClusterConfiguration(ctx context.Context, client kubernetes.Interface) (kubeadmDoc, error) {
	var lastErr error
	for i := 0; i < 30; i++ {
		cm, err := client.CoreV1().ConfigMaps("kube-system").Get(ctx, "kubeadm-config", metav1.GetOptions{})
		if err == nil {
			docs, err := parseKubeadmDocs([]byte(cm.Data["ClusterConfiguration"]))
			if err != nil {
				return nil, fmt.Errorf("parsing kube-system/kubeadm-config: %w", err)
			}
			if d := findDoc(docs, "ClusterConfiguration"); d != nil {
				return d, nil
			}
			return nil, fmt.Errorf("kube-system/kubeadm-config has no ClusterConfiguration")
		}
		lastErr = err
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(2 * time.Second):
		}
	}
	return nil, fmt.Errorf("reading kube-system/kubeadm-config: %w", lastErr)
}
