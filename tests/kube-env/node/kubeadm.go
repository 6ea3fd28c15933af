package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"os/exec"
	"strings"

	clientset "k8s.io/client-go/kubernetes"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	kubeadmapi "k8s.io/kubernetes/cmd/kubeadm/app/apis/kubeadm"
	kubeadmconstants "k8s.io/kubernetes/cmd/kubeadm/app/constants"
	"k8s.io/kubernetes/cmd/kubeadm/app/phases/bootstraptoken/clusterinfo"
	nodetoken "k8s.io/kubernetes/cmd/kubeadm/app/phases/bootstraptoken/node"
	certsphase "k8s.io/kubernetes/cmd/kubeadm/app/phases/certs"
	kubeconfigphase "k8s.io/kubernetes/cmd/kubeadm/app/phases/kubeconfig"
	kubeletphase "k8s.io/kubernetes/cmd/kubeadm/app/phases/kubelet"
	"k8s.io/kubernetes/cmd/kubeadm/app/phases/markcontrolplane"
	"k8s.io/kubernetes/cmd/kubeadm/app/phases/uploadconfig"
	configutil "k8s.io/kubernetes/cmd/kubeadm/app/util/config"
)

// caFiles are the cluster's CAs the bootstrap data must carry for a control-plane machine:
// kubeadm would otherwise make new ones, and this machine would not be part of the cluster.
var caFiles = []string{
	"ca.crt", "ca.key",
	"etcd/ca.crt", "etcd/ca.key",
	"front-proxy-ca.crt", "front-proxy-ca.key",
	"sa.key", "sa.pub",
}

func checkClusterCAs(m machine) error {
	var missing []string
	for _, f := range caFiles {
		if _, err := os.Stat(m.pki(f)); err != nil {
			missing = append(missing, f)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("the cluster's CAs are not all in %s: missing %s", m.pkiDir(), strings.Join(missing, ", "))
	}
	return nil
}

// kubeadmVersion is the version of the machine's binaries, as `kubeadm version -o short` says.
func kubeadmVersion(ctx context.Context, m machine) (string, error) {
	out, err := exec.CommandContext(ctx, m.bin("kubeadm"), "version", "-o", "short").Output()
	if err != nil {
		return "", fmt.Errorf("running %s version: %w", m.bin("kubeadm"), err)
	}
	return strings.TrimSpace(string(out)), nil
}

// kubeadmConfigFromDocs loads this machine's configuration the way kubeadm's --config does
// (kubeadm's own decoding, defaulting and validation), with one difference: kubeadm replaces a
// loopback advertise address with a host interface's address, and every machine here lives on
// a loopback address. The documents are loaded with a placeholder address (TEST-NET-1, never
// used) and the machine's address is set on the loaded configuration.
func kubeadmConfigFromDocs(m machine, docs []kubeadmDoc) (*kubeadmapi.InitConfiguration, error) {
	for _, d := range docs {
		if d.kind() == "InitConfiguration" {
			d.child("localAPIEndpoint")["advertiseAddress"] = placeholderAddress
		}
	}
	defer func() {
		for _, d := range docs {
			if d.kind() == "InitConfiguration" {
				d.child("localAPIEndpoint")["advertiseAddress"] = m.Address
			}
		}
	}()
	data, err := marshalKubeadmDocs(docs)
	if err != nil {
		return nil, err
	}
	cfg, err := configutil.BytesToInitConfiguration(data, true)
	if err != nil {
		return nil, fmt.Errorf("kubeadm refused the configuration: %w", err)
	}
	cfg.LocalAPIEndpoint.AdvertiseAddress = m.Address
	return cfg, nil
}

const placeholderAddress = "192.0.2.1"

// kubeconfigFiles are the kubeconfigs `kubeadm init` writes, all of which a machine here uses.
var kubeconfigFiles = []string{
	kubeadmconstants.AdminKubeConfigFileName,
	kubeadmconstants.SuperAdminKubeConfigFileName,
	kubeadmconstants.ControllerManagerKubeConfigFileName,
	kubeadmconstants.SchedulerKubeConfigFileName,
	kubeadmconstants.KubeletKubeConfigFileName,
}

// makeCertsAndKubeconfigs has kubeadm's certs and kubeconfig phases generate what `kubeadm
// init` generates for a control-plane machine, from the cluster CAs already in the
// certificates directory (kubeadm uses a CA it finds instead of making one).
func makeCertsAndKubeconfigs(m machine, cfg *kubeadmapi.InitConfiguration) error {
	if err := checkClusterCAs(m); err != nil {
		return err
	}
	if err := certsphase.CreatePKIAssets(cfg); err != nil {
		return fmt.Errorf("generating certificates in %s: %w", m.pkiDir(), err)
	}
	for _, name := range kubeconfigFiles {
		if err := kubeconfigphase.CreateKubeConfigFile(name, m.kubernetesDir(), cfg); err != nil {
			return fmt.Errorf("writing %s in %s: %w", name, m.kubernetesDir(), err)
		}
	}
	log.Printf("certificates and kubeconfigs made from the cluster CAs in %s", m.pkiDir())
	return nil
}

// uploadInitState is what `kubeadm init` uploads (its upload-config and bootstrap-token
// phases), with kubeadm's code, through client (the local API server). cluster-info is made
// from endpointAdmin, the admin.conf that names the control-plane endpoint.
func uploadInitState(cfg *kubeadmapi.InitConfiguration, client clientset.Interface, endpointAdmin *clientcmdapi.Config) error {
	steps := []struct {
		what string
		do   func() error
	}{
		{"uploading kube-system/kubeadm-config", func() error { return uploadconfig.UploadConfiguration(cfg, client) }},
		{"uploading kube-system/kubelet-config", func() error { return kubeletphase.CreateConfigMap(&cfg.ClusterConfiguration, client) }},
		{"creating the bootstrap tokens", func() error { return nodetoken.UpdateOrCreateTokens(client, false, cfg.BootstrapTokens) }},
		{"allowing bootstrap tokens to get Nodes", func() error { return nodetoken.AllowBootstrapTokensToGetNodes(client) }},
		{"allowing bootstrap tokens to post CSRs", func() error { return nodetoken.AllowBootstrapTokensToPostCSRs(client) }},
		{"auto-approving node client CSRs", func() error { return nodetoken.AutoApproveNodeBootstrapTokens(client) }},
		{"auto-approving node certificate rotation", func() error { return nodetoken.AutoApproveNodeCertificateRotation(client) }},
		{"creating kube-public/cluster-info", func() error { return clusterinfo.CreateBootstrapConfigMapIfNotExists(client, endpointAdmin) }},
		{"allowing anonymous reads of cluster-info", func() error { return clusterinfo.CreateClusterInfoRBACRules(client) }},
	}
	for _, s := range steps {
		if err := s.do(); err != nil {
			return fmt.Errorf("%s: %w", s.what, err)
		}
	}
	return nil
}

// markControlPlane is kubeadm's mark-control-plane phase: the control-plane label and taints.
func markControlPlane(cfg *kubeadmapi.InitConfiguration, client clientset.Interface) error {
	if err := markcontrolplane.MarkControlPlane(client, cfg.NodeRegistration.Name, cfg.NodeRegistration.Taints); err != nil {
		return fmt.Errorf("marking Node %s as a control plane: %w", cfg.NodeRegistration.Name, err)
	}
	return nil
}
