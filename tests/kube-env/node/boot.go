package main

import (
	"context"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	kubeadmapi "k8s.io/kubernetes/cmd/kubeadm/app/apis/kubeadm"
)

// bootMachine boots the machine in its role, writes `ready`, and runs until ctx ends (SIGTERM).
func bootMachine(ctx context.Context, m machine, sup *supervisor) error {
	if err := os.MkdirAll(m.agentDir(), 0o700); err != nil {
		return err
	}
	version, err := kubeadmVersion(ctx, m)
	if err != nil {
		return err
	}
	data, err := os.ReadFile(m.bootstrapDataPath())
	if err != nil {
		return fmt.Errorf("reading the bootstrap data: %w", err)
	}
	docs, err := parseKubeadmDocs(data)
	if err != nil {
		return fmt.Errorf("parsing %s: %w", m.bootstrapDataPath(), err)
	}
	log.Printf("booting %s as %s with Kubernetes %s on %s", m.Name, m.Role, version, m.Address)

	var node *kubeletStandIn
	switch m.Role {
	case roleInit:
		node, err = bootInit(ctx, m, sup, docs, version)
	case roleJoinControlPlane:
		node, err = bootJoinControlPlane(ctx, m, sup, docs, version)
	default:
		node, err = bootWorker(ctx, m, docs, version)
	}
	if err != nil {
		return err
	}
	// Under simcloud's node-unregistered fault the machine runs but its Node does not appear:
	// the boot ends without it, and the kubelet stand-in registers in the background once the
	// fault goes. Otherwise a Node that cannot register fails the boot.
	registerLater := node.heldBack()
	if !registerLater {
		if err := node.register(ctx); err != nil {
			return err
		}
	}
	if err := writeStatus(m.Root, "ready"); err != nil {
		return err
	}
	log.Printf("%s is ready", m.Name)
	if registerLater {
		go func() {
			if err := node.register(ctx); err != nil {
				if ctx.Err() == nil {
					log.Printf("node %s did not register: %v", m.Name, err)
				}
				return
			}
			node.run(ctx)
		}()
	} else {
		go node.run(ctx)
	}
	if m.isControlPlane() {
		go refreshEtcdMembers(ctx, m)
		// On this goroutine, which started the components: see faultWatcher.run.
		newFaultWatcher(m.faultsDir(), sup, killableComponents).run(ctx)
		return nil
	}
	<-ctx.Done()
	return nil
}

// loadDerivedConfig writes the machine's kubeadm configuration to DIR/agent/kubeadm.yaml (for
// people to read; 0600, as it carries the bootstrap token) and loads it with kubeadm's code.
func loadDerivedConfig(m machine, cfg derivedConfig) (*kubeadmapi.InitConfiguration, error) {
	out, err := marshalKubeadmDocs(cfg.Docs)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(m.agentDir(), "kubeadm.yaml")
	if err := os.WriteFile(path, out, 0o600); err != nil {
		return nil, err
	}
	kcfg, err := kubeadmConfigFromDocs(m, cfg.Docs)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return kcfg, nil
}

func localServer(m machine, s clusterSettings) string {
	return "https://" + net.JoinHostPort(m.Address, strconv.Itoa(s.BindPort))
}

// bootInit is `kubeadm init` on this machine.
func bootInit(ctx context.Context, m machine, sup *supervisor, docs []kubeadmDoc, version string) (*kubeletStandIn, error) {
	init, cluster := findDoc(docs, "InitConfiguration"), findDoc(docs, "ClusterConfiguration")
	if init == nil {
		return nil, fmt.Errorf("%s has no InitConfiguration", m.bootstrapDataPath())
	}
	cfg, err := deriveMachineConfig(m, init, nil, cluster, docs, version)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", m.bootstrapDataPath(), err)
	}
	kcfg, err := loadDerivedConfig(m, cfg)
	if err != nil {
		return nil, err
	}
	if err := makeCertsAndKubeconfigs(m, kcfg); err != nil {
		return nil, err
	}
	if err := saveState(m, []string{m.etcdClientURL()}); err != nil {
		return nil, err
	}
	if err := startControlPlane(ctx, m, sup, cfg.Settings, []etcdMember{{m.Name, m.etcdPeerURL()}}, "new"); err != nil {
		return nil, err
	}
	local := filepath.Join(m.agentDir(), "super-admin-local.conf")
	if err := writeKubeconfigWithServer(m.rootfs("/etc/kubernetes/super-admin.conf"), local, localServer(m, cfg.Settings)); err != nil {
		return nil, err
	}
	client, err := clientFromFile(local, "")
	if err != nil {
		return nil, err
	}
	endpointAdmin, err := clientcmd.LoadFromFile(m.rootfs("/etc/kubernetes/admin.conf"))
	if err != nil {
		return nil, fmt.Errorf("loading admin.conf: %w", err)
	}
	if err := uploadInitState(kcfg, client, endpointAdmin); err != nil {
		return nil, err
	}
	if err := bindClusterAdmins(ctx, client); err != nil {
		return nil, err
	}
	return controlPlaneNode(m, cfg.Settings, kcfg, client, version)
}

// bindClusterAdmins binds admin.conf's group kubeadm:cluster-admins to cluster-admin, which
// `kubeadm init` does with super-admin.conf when it first uses admin.conf.
func bindClusterAdmins(ctx context.Context, client kubernetes.Interface) error {
	crb := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "kubeadm:cluster-admins"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: "kubeadm:cluster-admins"}},
	}
	if _, err := client.RbacV1().ClusterRoleBindings().Create(ctx, crb, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("binding kubeadm:cluster-admins to cluster-admin: %w", err)
	}
	return nil
}

// bootJoinControlPlane is `kubeadm join --control-plane` on this machine.
func bootJoinControlPlane(ctx context.Context, m machine, sup *supervisor, docs []kubeadmDoc, version string) (*kubeletStandIn, error) {
	join := findDoc(docs, "JoinConfiguration")
	d, err := joinDiscovery(join)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", m.bootstrapDataPath(), err)
	}
	bootstrapConfig, err := discoverCluster(d)
	if err != nil {
		return nil, err
	}
	bootstrapClient, err := clientFromConfig(bootstrapConfig)
	if err != nil {
		return nil, err
	}
	cluster, err := fetchClusterConfiguration(ctx, bootstrapClient)
	if err != nil {
		return nil, err
	}
	cfg, err := deriveMachineConfig(m, nil, join, cluster, nil, version)
	if err != nil {
		return nil, fmt.Errorf("kube-system/kubeadm-config: %w", err)
	}
	kcfg, err := loadDerivedConfig(m, cfg)
	if err != nil {
		return nil, err
	}
	if err := makeCertsAndKubeconfigs(m, kcfg); err != nil {
		return nil, err
	}
	// The etcd members are stacked beside the API servers: their addresses are the
	// `kubernetes` Service's endpoints, read through the control-plane endpoint.
	admin, err := clientFromFile(m.rootfs("/etc/kubernetes/super-admin.conf"), "")
	if err != nil {
		return nil, err
	}
	addrs, err := apiServerAddresses(ctx, admin)
	if err != nil {
		return nil, err
	}
	endpoints := etcdEndpointsFromAddresses(addrs)
	members, err := addEtcdMember(ctx, m, endpoints)
	if err != nil {
		return nil, err
	}
	if err := saveState(m, append([]string{m.etcdClientURL()}, endpoints...)); err != nil {
		return nil, err
	}
	if err := startControlPlane(ctx, m, sup, cfg.Settings, members, "existing"); err != nil {
		return nil, err
	}
	local, err := clientFromFile(m.rootfs("/etc/kubernetes/super-admin.conf"), localServer(m, cfg.Settings))
	if err != nil {
		return nil, err
	}
	return controlPlaneNode(m, cfg.Settings, kcfg, local, version)
}

func clientFromConfig(kc *clientcmdapi.Config) (kubernetes.Interface, error) {
	rc, err := clientcmd.NewDefaultClientConfig(*kc, nil).ClientConfig()
	if err != nil {
		return nil, err
	}
	return kubernetes.NewForConfig(rc)
}

// apiServerAddresses are the addresses of the control-plane machines: the InternalIPs of the
// Nodes kubeadm's mark-control-plane labelled (kubeadm itself lists the etcd static pods of
// those Nodes; there are no static pods here). The `kubernetes` Service has no endpoints to read:
// the API server refuses loopback addresses as endpoints.
func apiServerAddresses(ctx context.Context, client kubernetes.Interface) ([]string, error) {
	var lastErr error
	for i := 0; i < 30; i++ {
		nodes, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: "node-role.kubernetes.io/control-plane"})
		if err == nil {
			var addrs []string
			for _, n := range nodes.Items {
				for _, a := range n.Status.Addresses {
					if a.Type == corev1.NodeInternalIP {
						addrs = append(addrs, a.Address)
					}
				}
			}
			if len(addrs) > 0 {
				return addrs, nil
			}
			lastErr = fmt.Errorf("no addresses")
		} else {
			lastErr = err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(2 * time.Second):
		}
	}
	return nil, fmt.Errorf("reading the control-plane Nodes' addresses: %w", lastErr)
}

// startControlPlane starts etcd, kube-apiserver, kube-controller-manager and kube-scheduler in
// that order, each once the one before is healthy.
func startControlPlane(ctx context.Context, m machine, sup *supervisor, s clusterSettings, members []etcdMember, clusterState string) error {
	etcd, err := sup.start("etcd", m.bin("etcd"), etcdArgs(m, s, members, clusterState))
	if err != nil {
		return err
	}
	etcdHealth := "http://" + net.JoinHostPort(m.Address, "2381") + "/health"
	if err := waitHealthy(ctx, etcd, etcdHealth, &http.Client{Timeout: 3 * time.Second}, `"health":"true"`, 60*time.Second); err != nil {
		return err
	}
	apiserver, err := sup.start("kube-apiserver", m.bin("kube-apiserver"), apiServerArgs(m, s))
	if err != nil {
		return err
	}
	trusting, err := httpClientTrusting(m.pki("ca.crt"))
	if err != nil {
		return err
	}
	if err := waitHealthy(ctx, apiserver, localServer(m, s)+"/readyz", trusting, "", 120*time.Second); err != nil {
		return err
	}
	kcm, err := sup.start("kube-controller-manager", m.bin("kube-controller-manager"), controllerManagerArgs(m, s))
	if err != nil {
		return err
	}
	kcmHealth := "https://" + net.JoinHostPort(m.Address, "10257") + "/healthz"
	if err := waitHealthy(ctx, kcm, kcmHealth, insecureHTTPClient(), "", 60*time.Second); err != nil {
		return err
	}
	scheduler, err := sup.start("kube-scheduler", m.bin("kube-scheduler"), schedulerArgs(m, s))
	if err != nil {
		return err
	}
	schedulerHealth := "https://" + net.JoinHostPort(m.Address, "10259") + "/healthz"
	return waitHealthy(ctx, scheduler, schedulerHealth, insecureHTTPClient(), "", 60*time.Second)
}

// controlPlaneNode is a control-plane machine's kubelet stand-in, with the kubelet.conf kubeadm
// made (its own API server as server); once it registers its Node it marks it as kubeadm's
// mark-control-plane phase does.
func controlPlaneNode(m machine, s clusterSettings, kcfg *kubeadmapi.InitConfiguration, admin kubernetes.Interface, version string) (*kubeletStandIn, error) {
	client, err := clientFromFile(m.rootfs("/etc/kubernetes/kubelet.conf"), localServer(m, s))
	if err != nil {
		return nil, err
	}
	node := newKubeletStandIn(m, client, version)
	node.onRegistered = func() error { return markControlPlane(kcfg, admin) }
	return node, nil
}

// bootWorker is `kubeadm join` on a worker: discovery, then the kubelet stand-in's TLS
// bootstrap through the control-plane endpoint; bootMachine has it register the Node.
func bootWorker(ctx context.Context, m machine, docs []kubeadmDoc, version string) (*kubeletStandIn, error) {
	d, err := joinDiscovery(findDoc(docs, "JoinConfiguration"))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", m.bootstrapDataPath(), err)
	}
	bootstrapConfig, err := discoverCluster(d)
	if err != nil {
		return nil, err
	}
	bootstrapPath := m.rootfs("/etc/kubernetes/bootstrap-kubelet.conf")
	if err := os.MkdirAll(filepath.Dir(bootstrapPath), 0o755); err != nil {
		return nil, err
	}
	if err := clientcmd.WriteToFile(*bootstrapConfig, bootstrapPath); err != nil {
		return nil, err
	}
	kubeletConf := m.rootfs("/etc/kubernetes/kubelet.conf")
	if err := tlsBootstrap(ctx, kubeletConf, bootstrapPath, m.kubeletPKIDir(), m.Name); err != nil {
		return nil, err
	}
	if err := saveState(m, nil); err != nil {
		return nil, err
	}
	client, err := clientFromFile(kubeletConf, "")
	if err != nil {
		return nil, err
	}
	return newKubeletStandIn(m, client, version), nil
}
