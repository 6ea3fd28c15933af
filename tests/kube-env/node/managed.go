package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	bootstraptokenv1 "k8s.io/kubernetes/cmd/kubeadm/app/apis/bootstraptoken/v1"
	kubeadmapi "k8s.io/kubernetes/cmd/kubeadm/app/apis/kubeadm"
	kubeadmconstants "k8s.io/kubernetes/cmd/kubeadm/app/constants"
	nodetoken "k8s.io/kubernetes/cmd/kubeadm/app/phases/bootstraptoken/node"
	certsphase "k8s.io/kubernetes/cmd/kubeadm/app/phases/certs"
	kubeconfigphase "k8s.io/kubernetes/cmd/kubeadm/app/phases/kubeconfig"
	"k8s.io/kubernetes/cmd/kubeadm/app/phases/uploadconfig"
)

// A managed control plane is what a managed Kubernetes service runs for a cluster (EKS, GKE):
// etcd, kube-apiserver, kube-controller-manager and kube-scheduler, reached at one endpoint,
// with no Node and no kubelet of its own. `capw-node managed` runs one on its address, as
// `kubeadm init` would set it up, from the files simcloud keeps in its directory:
//
//	rootfs/etc/kubernetes/pki/ca.crt, ca.key  the service's CA (simcloud issues it)
//	wanted                                    "<version> <bin-dir>": what to serve; a new line
//	                                          upgrades in place
//	tokens                                    "<token> <expires-unix>": the bootstrap token
//	                                          whose Secret kube-system must hold
//
// and reports in:
//
//	status          booting | ready | updating | failed: reason
//	served-version  the version the API server answers /version with, once /readyz is ok

// managedService is the `managed` command line.
type managedService struct {
	Root, Address, Cluster string
	Port                   int
}

// managedPollInterval is how often the agent looks at the wanted and tokens files.
const managedPollInterval = time.Second

// managedPodSubnet is the service's pod network: the controller manager gives each Node a
// podCIDR from it, which the kubelet stand-in reads.
const managedPodSubnet = "10.244.0.0/16"

func (s managedService) validate() error {
	switch {
	case s.Root == "":
		return fmt.Errorf("--root is required")
	case s.Cluster == "":
		return fmt.Errorf("--cluster is required")
	case s.Port <= 0 || s.Port > 65535:
		return fmt.Errorf("--port %d is not a port", s.Port)
	}
	if ip := net.ParseIP(s.Address); ip == nil || ip.To4() == nil {
		return fmt.Errorf("--address %q is not an IPv4 address", s.Address)
	}
	return nil
}

func (s managedService) wantedPath() string { return filepath.Join(s.Root, "wanted") }
func (s managedService) tokensPath() string { return filepath.Join(s.Root, "tokens") }
func (s managedService) servedVersionPath() string {
	return filepath.Join(s.Root, "served-version")
}

// endpoint is where the service is reached: its address and port.
func (s managedService) endpoint() string {
	return net.JoinHostPort(s.Address, strconv.Itoa(s.Port))
}

// machine is the service as the machine helpers see it: a control plane named after its
// directory (mcp-<n>), with the binaries of binDir.
func (s managedService) machine(binDir string) machine {
	return machine{
		Root:    s.Root,
		BinDir:  binDir,
		Address: s.Address,
		Role:    roleInit,
		Name:    filepath.Base(s.Root),
	}
}

// wantedVersion is what simcloud wants served: the version and its binaries.
type wantedVersion struct{ Version, BinDir string }

// parseWanted reads "<version> <bin-dir>".
func parseWanted(text string) (wantedVersion, error) {
	fields := strings.Fields(text)
	if len(fields) != 2 || !strings.HasPrefix(fields[0], "v") {
		return wantedVersion{}, fmt.Errorf("want \"<vX.Y.Z> <bin-dir>\", found %q", strings.TrimSpace(text))
	}
	return wantedVersion{Version: fields[0], BinDir: fields[1]}, nil
}

func readWanted(path string) (wantedVersion, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return wantedVersion{}, err
	}
	w, err := parseWanted(string(data))
	if err != nil {
		return wantedVersion{}, fmt.Errorf("%s: %w", path, err)
	}
	return w, nil
}

// serviceToken is one line of the tokens file; the token is secret and never logged.
type serviceToken struct {
	Token   string
	Expires time.Time
}

// parseTokens reads "<token> <expires-unix>" lines.
func parseTokens(text string) ([]serviceToken, error) {
	var out []serviceToken
	for i, line := range strings.Split(text, "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		if len(fields) != 2 {
			return nil, fmt.Errorf("line %d: want \"<token> <expires-unix>\"", i+1)
		}
		secs, err := strconv.ParseInt(fields[1], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("line %d: expiry %q is not a number", i+1, fields[1])
		}
		if _, err := bootstraptokenv1.NewBootstrapTokenString(fields[0]); err != nil {
			// The error would quote the token.
			return nil, fmt.Errorf("line %d: not a bootstrap token", i+1)
		}
		out = append(out, serviceToken{Token: fields[0], Expires: time.Unix(secs, 0)})
	}
	return out, nil
}

// kubeadmTokens are the tokens as kubeadm's bootstrap-token phase makes their Secrets: for
// signing cluster-info and authenticating, in the group `kubeadm token create` gives.
func kubeadmTokens(tokens []serviceToken) ([]bootstraptokenv1.BootstrapToken, error) {
	var out []bootstraptokenv1.BootstrapToken
	for _, t := range tokens {
		s, err := bootstraptokenv1.NewBootstrapTokenString(t.Token)
		if err != nil {
			return nil, fmt.Errorf("not a bootstrap token")
		}
		expires := metav1.NewTime(t.Expires)
		out = append(out, bootstraptokenv1.BootstrapToken{
			Token:       s,
			Description: "the managed control plane's bootstrap token, issued by the cloud",
			Expires:     &expires,
			Usages:      []string{"signing", "authentication"},
			Groups:      []string{kubeadmconstants.NodeBootstrapTokenAuthGroup},
		})
	}
	return out, nil
}

// managedKubeadmDocs are the service's kubeadm configuration: its cluster, endpoint and
// version; no Node (the node registration is a name kubeadm's phases need, nothing more).
func managedKubeadmDocs(s managedService, version string) (init, cluster kubeadmDoc) {
	init = kubeadmDoc{
		"apiVersion":       "kubeadm.k8s.io/v1beta4",
		"kind":             "InitConfiguration",
		"localAPIEndpoint": map[string]interface{}{"bindPort": s.Port},
	}
	cluster = kubeadmDoc{
		"apiVersion":           "kubeadm.k8s.io/v1beta4",
		"kind":                 "ClusterConfiguration",
		"clusterName":          s.Cluster,
		"kubernetesVersion":    version,
		"controlPlaneEndpoint": s.endpoint(),
		"networking":           map[string]interface{}{"podSubnet": managedPodSubnet},
	}
	return init, cluster
}

// managedKubeconfigs are the kubeconfigs the service's components and the agent use: no
// kubelet.conf, as there is no kubelet.
var managedKubeconfigs = []string{
	kubeadmconstants.AdminKubeConfigFileName,
	kubeadmconstants.SuperAdminKubeConfigFileName,
	kubeadmconstants.ControllerManagerKubeConfigFileName,
	kubeadmconstants.SchedulerKubeConfigFileName,
}

// runManagedService sets the service up (again, on the data a previous agent left: a
// restart), serves, and follows the wanted and tokens files until ctx ends.
func runManagedService(ctx context.Context, s managedService, sup *supervisor) error {
	wanted, err := readWanted(s.wantedPath())
	if err != nil {
		return err
	}
	m := s.machine(wanted.BinDir)
	if err := os.MkdirAll(m.agentDir(), 0o700); err != nil {
		return err
	}
	if _, err := os.Stat(m.pki("ca.key")); err != nil {
		return fmt.Errorf("the service's CA is not in %s: %w", m.pkiDir(), err)
	}
	init, cluster := managedKubeadmDocs(s, wanted.Version)
	cfg, err := deriveMachineConfig(m, init, nil, cluster, nil, wanted.Version)
	if err != nil {
		return err
	}
	kcfg, err := loadDerivedConfig(m, cfg)
	if err != nil {
		return err
	}
	tokensText, tokens, err := readTokens(s)
	if err != nil {
		return err
	}
	// Only the cloud's token: kubeadm's defaulting would add a random one nobody knows.
	if kcfg.BootstrapTokens, err = kubeadmTokens(tokens); err != nil {
		return err
	}
	log.Printf("setting up managed control plane %s of cluster %s, Kubernetes %s, at %s", m.Name, s.Cluster, wanted.Version, s.endpoint())
	// kubeadm uses the CA it finds and makes the rest: etcd and front-proxy CAs, the
	// service-account key, the components' certificates.
	if err := certsphase.CreatePKIAssets(kcfg); err != nil {
		return fmt.Errorf("generating certificates in %s: %w", m.pkiDir(), err)
	}
	for _, name := range managedKubeconfigs {
		if err := kubeconfigphase.CreateKubeConfigFile(name, m.kubernetesDir(), kcfg); err != nil {
			return fmt.Errorf("writing %s in %s: %w", name, m.kubernetesDir(), err)
		}
	}
	members := []etcdMember{{m.Name, m.etcdPeerURL()}}
	if err := startControlPlane(ctx, m, sup, cfg.Settings, members, "new"); err != nil {
		return err
	}
	client, err := clientFromFile(m.rootfs("/etc/kubernetes/super-admin.conf"), "")
	if err != nil {
		return err
	}
	endpointAdmin, err := clientcmd.LoadFromFile(m.rootfs("/etc/kubernetes/admin.conf"))
	if err != nil {
		return fmt.Errorf("loading admin.conf: %w", err)
	}
	// kubeadm-config, kubelet-config, the token's Secret, the bootstrap-token RBAC and CSR
	// approval, kube-public/cluster-info: what worker joins read.
	if err := uploadInitState(kcfg, client, endpointAdmin); err != nil {
		return err
	}
	if err := bindClusterAdmins(ctx, client); err != nil {
		return err
	}
	if err := announceServing(ctx, s, m, wanted.Version); err != nil {
		return err
	}
	log.Printf("managed control plane %s serves Kubernetes %s at %s", m.Name, wanted.Version, s.endpoint())
	return followManagedFiles(ctx, s, sup, kcfg, client, wanted, tokensText)
}

// readTokens reads the tokens file, its text too (to notice a change).
func readTokens(s managedService) (string, []serviceToken, error) {
	data, err := os.ReadFile(s.tokensPath())
	if err != nil {
		return "", nil, err
	}
	tokens, err := parseTokens(string(data))
	if err != nil {
		return "", nil, fmt.Errorf("%s: %w", s.tokensPath(), err)
	}
	return string(data), tokens, nil
}

// announceServing waits until the API server answers /readyz and /version at version, then
// writes served-version and `ready`.
func announceServing(ctx context.Context, s managedService, m machine, version string) error {
	trusting, err := httpClientTrusting(m.pki("ca.crt"))
	if err != nil {
		return err
	}
	server := "https://" + s.endpoint()
	deadline := time.Now().Add(2 * time.Minute)
	var last error
	for {
		served, err := servedVersion(ctx, trusting, server)
		if err == nil && served == version {
			break
		}
		if err == nil {
			err = fmt.Errorf("it serves %s", served)
		}
		last = err
		if time.Now().After(deadline) {
			return fmt.Errorf("the API server at %s did not serve %s within 2m: %w", server, version, last)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
	if err := writeFileAtomically(s.servedVersionPath(), version+"\n", 0o644); err != nil {
		return err
	}
	return writeStatus(s.Root, "ready")
}

// servedVersion is the gitVersion the API server at server answers, once /readyz is ok.
func servedVersion(ctx context.Context, client *http.Client, server string) (string, error) {
	get := func(path string) ([]byte, error) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, server+path, nil)
		resp, err := client.Do(req)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 64*1024))
		if resp.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("%s: HTTP %d", path, resp.StatusCode)
		}
		return body, nil
	}
	if _, err := get("/readyz"); err != nil {
		return "", err
	}
	body, err := get("/version")
	if err != nil {
		return "", err
	}
	var info struct {
		GitVersion string `json:"gitVersion"`
	}
	if err := json.Unmarshal(body, &info); err != nil {
		return "", fmt.Errorf("/version: %w", err)
	}
	return info.GitVersion, nil
}

// followManagedFiles keeps the token Secrets and the version in step with simcloud's files
// until ctx ends: a new token gets its Secret in kube-system (the renewed one stays until the
// token cleaner removes it when it expires); a new wanted version is an in-place upgrade.
func followManagedFiles(ctx context.Context, s managedService, sup *supervisor, kcfg *kubeadmapi.InitConfiguration, client kubernetes.Interface, current wantedVersion, tokensText string) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(managedPollInterval):
		}
		if text, tokens, err := readTokens(s); err != nil {
			log.Printf("reading the tokens: %v", err)
		} else if text != tokensText {
			if bts, err := kubeadmTokens(tokens); err != nil {
				log.Printf("reading the tokens: %v", err)
			} else if err := nodetoken.UpdateOrCreateTokens(client, false, bts); err != nil {
				log.Printf("creating the renewed bootstrap token's Secret: %v", err)
			} else {
				log.Printf("bootstrap token Secret created for the renewed token")
				tokensText = text
			}
		}
		wanted, err := readWanted(s.wantedPath())
		if err != nil {
			log.Printf("reading the wanted version: %v", err)
			continue
		}
		if wanted == current {
			continue
		}
		if err := upgradeInPlace(ctx, s, sup, kcfg, client, wanted); err != nil {
			return fmt.Errorf("upgrading to %s: %w", wanted.Version, err)
		}
		current = wanted
	}
}

// upgradeInPlace restarts the components with wanted's binaries on the same data, each with
// its command line, in start order, each once the one before is healthy; then records the
// new version in kubeadm-config and announces it once the API server serves it.
func upgradeInPlace(ctx context.Context, s managedService, sup *supervisor, kcfg *kubeadmapi.InitConfiguration, client kubernetes.Interface, wanted wantedVersion) error {
	if err := writeStatus(s.Root, "updating"); err != nil {
		return err
	}
	log.Printf("upgrading in place to Kubernetes %s with %s", wanted.Version, wanted.BinDir)
	m := s.machine(wanted.BinDir)
	trusting, err := httpClientTrusting(m.pki("ca.crt"))
	if err != nil {
		return err
	}
	checks := map[string]struct {
		url    string
		client *http.Client
		want   string
	}{
		"etcd":                    {"http://" + net.JoinHostPort(m.Address, "2381") + "/health", &http.Client{Timeout: 3 * time.Second}, `"health":"true"`},
		"kube-apiserver":          {"https://" + s.endpoint() + "/readyz", trusting, ""},
		"kube-controller-manager": {"https://" + net.JoinHostPort(m.Address, "10257") + "/healthz", insecureHTTPClient(), ""},
		"kube-scheduler":          {"https://" + net.JoinHostPort(m.Address, "10259") + "/healthz", insecureHTTPClient(), ""},
	}
	for _, name := range []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler"} {
		c, err := sup.restartWith(name, m.bin(name))
		if err != nil {
			return err
		}
		check := checks[name]
		if err := waitHealthy(ctx, c, check.url, check.client, check.want, 2*time.Minute); err != nil {
			return err
		}
	}
	kcfg.KubernetesVersion = wanted.Version
	if err := uploadconfig.UploadConfiguration(kcfg, client); err != nil {
		log.Printf("recording %s in kube-system/kubeadm-config: %v", wanted.Version, err)
	}
	return announceServing(ctx, s, m, wanted.Version)
}

// writeFileAtomically replaces path with content and mode: a reader sees the old content or
// the new one.
func writeFileAtomically(path, content string, mode os.FileMode) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(content), mode); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}
