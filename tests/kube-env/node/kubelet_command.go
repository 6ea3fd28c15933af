package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// `capw-node kubelet` is the management cluster's kubelet stand-in, the process kubelet: the
// test management cluster (a real kube-apiserver and etcd, kube-controller-manager and
// kube-scheduler) has no kubelet, and capw's hosted control planes and its own controller are
// Deployments and StatefulSets there. It registers Node NAME with the kubeconfig's
// credentials, Ready, with the pod CIDR, its address and this machine's capacity (so the real
// scheduler places Pods on it), keeps it Ready and its Lease renewed, runs the Pods bound to
// it as local processes (processes.go, by the image table: images.go), and provisions the
// claims of StorageClass capw-local (provisioner.go). The pod CIDR is made local to this
// machine (`ip route replace local CIDR dev lo`), so each Pod's processes listen on its own
// address and every process here reaches them. On SIGTERM it stops every Pod's processes
// (SIGTERM, SIGKILL after their grace period), removes the route and exits.
//
//	capw-node kubelet --kubeconfig FILE --name NODE --root DIR --images FILE --pod-cidr CIDR [--simulated]
//	                  [--address IP] [--crash-backoff DURATION] [--kubelet-version VERSION] [--cpus N]
//
// DIR holds the kubelet's log (kubelet.log), one directory per Pod,
// DIR/pods/<ns>_<name>_<uid>, with its hosts file (etc-hosts), its volumes (volumes/<volume>),
// each container's log (<container>.log, appended across restarts) and spec (<container>.json,
// what container-exec runs), the claims' volumes (DIR/volumes/<pv>), and the mount points
// containers had to create on the machine's file system (created-mount-points, removed when
// the kubelet stops).
//
// --cpus sets the CPUs the Node advertises (default: this machine's). The scheduler places Pods
// by their requests against it, so more than the real cores let a benchmark run more control
// planes on one machine than their requests would (the processes share the real cores; what is
// measured is capw's own share, not theirs).
//
// With --simulated no process runs: every Pod bound to the Node is reported Running and Ready
// at once (as the pause Pods are), for the scale benchmark; --images is then optional and no
// route is made.

// processKubeletConfig is the kubelet command line.
type processKubeletConfig struct {
	Kubeconfig, Name, Root, Images, PodCIDR, Address, Version string
	Simulated                                                 bool
	CrashBackoff                                              time.Duration
	CPUs                                                      int
}

func parseProcessKubeletFlags(args []string) (processKubeletConfig, error) {
	fs := flag.NewFlagSet("kubelet", flag.ContinueOnError)
	var c processKubeletConfig
	fs.StringVar(&c.Kubeconfig, "kubeconfig", "", "the kubeconfig of the management cluster (its credentials register the Node)")
	fs.StringVar(&c.Name, "name", "", "the Node's name")
	fs.StringVar(&c.Root, "root", "", "the kubelet's directory: DIR/pods, DIR/volumes")
	fs.StringVar(&c.Images, "images", "", "the image table (JSON)")
	fs.StringVar(&c.PodCIDR, "pod-cidr", "", "the Node's pod CIDR, made local to this machine")
	fs.BoolVar(&c.Simulated, "simulated", false, "run no process: report every Pod Running and Ready")
	fs.StringVar(&c.Address, "address", "127.0.0.1", "the Node's InternalIP, host-network Pods' address")
	fs.DurationVar(&c.CrashBackoff, "crash-backoff", defaultBackoffBase, "the first wait of the crash back-off (doubling up to 30 times it)")
	fs.StringVar(&c.Version, "kubelet-version", kubernetesModuleVersion(), "the Node's kubeletVersion")
	fs.IntVar(&c.CPUs, "cpus", 0, "the CPUs the Node advertises (0: this machine's)")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	switch {
	case c.Kubeconfig == "":
		return c, errors.New("--kubeconfig is required")
	case c.Name == "":
		return c, errors.New("--name is required")
	case c.Root == "":
		return c, errors.New("--root is required")
	case c.Images == "" && !c.Simulated:
		return c, errors.New("--images is required (unless --simulated)")
	case c.CrashBackoff <= 0:
		return c, errors.New("--crash-backoff must be positive")
	}
	if _, err := netip.ParsePrefix(c.PodCIDR); err != nil {
		return c, fmt.Errorf("--pod-cidr %q: %w", c.PodCIDR, err)
	}
	if net.ParseIP(c.Address) == nil {
		return c, fmt.Errorf("--address %q is not an IP address", c.Address)
	}
	return c, nil
}

func runKubelet(ctx context.Context, args []string) int {
	cfg, err := parseProcessKubeletFlags(args)
	if err != nil {
		fmt.Fprintf(os.Stderr, "capw-node kubelet: %v\n", err)
		return 2
	}
	if cfg.Root, err = filepath.Abs(cfg.Root); err != nil {
		fmt.Fprintf(os.Stderr, "capw-node kubelet: %v\n", err)
		return 2
	}
	if err := runProcessKubelet(ctx, cfg); err != nil {
		if errors.Is(err, context.Canceled) && ctx.Err() != nil {
			return 0
		}
		log.Printf("kubelet stand-in failed: %v", err)
		return 1
	}
	return 0
}

// runProcessKubelet runs the process kubelet until ctx ends, then stops every Pod.
func runProcessKubelet(ctx context.Context, cfg processKubeletConfig) error {
	for _, d := range []string{"pods", "volumes"} {
		if err := os.MkdirAll(filepath.Join(cfg.Root, d), 0o755); err != nil {
			return err
		}
	}
	closeLog := logTo(filepath.Join(cfg.Root, "kubelet.log"))
	defer closeLog()
	restConfig, err := clientcmd.BuildConfigFromFlags("", cfg.Kubeconfig)
	if err != nil {
		return fmt.Errorf("loading %s: %w", cfg.Kubeconfig, err)
	}
	client, err := kubernetes.NewForConfig(restConfig)
	if err != nil {
		return err
	}
	k := &kubeletStandIn{
		client: client, name: cfg.Name, address: cfg.Address, version: cfg.Version,
		podCIDR: netip.MustParsePrefix(cfg.PodCIDR).Masked().String(), capacity: machineCapacity(cfg.Root, cfg.CPUs),
		simulated: cfg.Simulated,
	}
	if !cfg.Simulated {
		table, err := loadImageTable(cfg.Images)
		if err != nil {
			return err
		}
		rt, err := newProcessRuntime(cfg.Root, table, client)
		if err != nil {
			return err
		}
		rt.backoffBase = cfg.CrashBackoff
		rt.apiServer = apiServerHostPort(restConfig.Host)
		k.runtime = rt
		// The Pods' hosts files name the management cluster's Services, as cluster DNS
		// would (services.go).
		index, err := startServiceIndex(ctx, client, nil)
		if err != nil {
			return err
		}
		extraHosts = index.hosts
		// The AnyIP route: every address of the pod CIDR is this machine's, so each Pod's
		// processes can listen on its own.
		if err := localRoute("replace", k.podCIDR); err != nil {
			return err
		}
		defer func() {
			if err := localRoute("del", k.podCIDR); err != nil {
				log.Printf("kubelet stand-in: %v", err)
			}
		}()
		defer rt.stopAll()
	}
	log.Printf("kubelet stand-in %s: pod CIDR %s, address %s, directory %s, simulated %v", cfg.Name, k.podCIDR, cfg.Address, cfg.Root, cfg.Simulated)
	if err := k.register(ctx); err != nil {
		return err
	}
	provisioner := &localVolumes{client: client, node: cfg.Name, dir: filepath.Join(cfg.Root, "volumes")}
	go func() {
		for {
			provisioner.sync(ctx)
			select {
			case <-ctx.Done():
				return
			case <-time.After(podSyncInterval):
			}
		}
	}()
	k.syncPods(ctx)
	k.run(ctx)
	log.Printf("kubelet stand-in %s: stopping every Pod", cfg.Name)
	return nil
}

// apiServerHostPort is the host:port of the API server's URL (443 when it names none).
func apiServerHostPort(server string) string {
	u, err := url.Parse(server)
	if err != nil || u.Host == "" {
		return ""
	}
	if u.Port() == "" {
		return net.JoinHostPort(u.Hostname(), "443")
	}
	return u.Host
}

// machineCapacity is this machine's CPUs (cpus when above 0), memory and the file system of
// root, and the kubelet's default of 110 Pods raised to 250: the management cluster's one Node
// holds every hosted control plane.
func machineCapacity(root string, cpus int) corev1.ResourceList {
	if cpus <= 0 {
		cpus = runtime.NumCPU()
	}
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:  *resource.NewQuantity(int64(cpus), resource.DecimalSI),
		corev1.ResourcePods: *resource.NewQuantity(250, resource.DecimalSI),
	}
	if mem := memTotal(); mem > 0 {
		capacity[corev1.ResourceMemory] = *resource.NewQuantity(mem, resource.BinarySI)
	} else {
		capacity[corev1.ResourceMemory] = resource.MustParse("4Gi")
	}
	var st syscall.Statfs_t
	if err := syscall.Statfs(root, &st); err == nil {
		capacity[corev1.ResourceEphemeralStorage] = *resource.NewQuantity(int64(st.Blocks)*st.Bsize, resource.BinarySI)
	}
	return capacity
}

// memTotal is /proc/meminfo's MemTotal in bytes, 0 when unknown.
func memTotal() int64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "MemTotal:" {
			kb, err := strconv.ParseInt(fields[1], 10, 64)
			if err == nil {
				return kb * 1024
			}
		}
	}
	return 0
}

// kubernetesModuleVersion is the version of the Kubernetes code capw-node is built with, the
// kubeletVersion its Node reports by default.
func kubernetesModuleVersion() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range info.Deps {
			if dep.Path == "k8s.io/kubernetes" && strings.HasPrefix(dep.Version, "v") {
				return dep.Version
			}
		}
	}
	return "v1.35.4"
}
