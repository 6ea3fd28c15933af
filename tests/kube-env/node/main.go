package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"syscall"
)

func init() {
	// Children are started with Pdeathsig, which fires when the thread that forked them ends:
	// the main goroutine keeps its thread, and only it starts children.
	runtime.LockOSThread()
}

func usage() {
	fmt.Fprint(os.Stderr, `usage:
  capw-node boot  --root DIR --bin-dir BIN --address IP --role init|join-control-plane|worker --name NODE_NAME --provider-id PROVIDER_ID
  capw-node reset --root DIR --bin-dir BIN
  capw-node lb    --listen IP:PORT --backends FILE
  capw-node managed --root DIR --address IP --port PORT --cluster NAME
  capw-node kubelet --kubeconfig FILE --name NODE --root DIR --images FILE --pod-cidr CIDR [--simulated]
  capw-node proxy --kubeconfig FILE --service-cidr CIDR --load-balancer-cidr CIDR
`)
	os.Exit(2)
}

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	switch os.Args[1] {
	case "boot":
		os.Exit(runBoot(ctx, os.Args[2:]))
	case "reset":
		os.Exit(runReset(ctx, os.Args[2:]))
	case "lb":
		os.Exit(runLB(ctx, os.Args[2:]))
	case "managed":
		os.Exit(runManaged(ctx, os.Args[2:]))
	case "kubelet":
		os.Exit(runKubelet(ctx, os.Args[2:]))
	case "container-exec": // hidden: a container's process, started by the kubelet's runner
		os.Exit(runContainerExec(os.Args[2:]))
	case "pause": // hidden: a pause container of a Pod run as processes
		os.Exit(runPause(ctx))
	case "proxy":
		os.Exit(runProxy(ctx, os.Args[2:]))
	default:
		usage()
	}
}

func runBoot(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("boot", flag.ExitOnError)
	var m machine
	fs.StringVar(&m.Root, "root", "", "the machine directory")
	fs.StringVar(&m.BinDir, "bin-dir", "", "the directory of the machine's Kubernetes binaries")
	fs.StringVar(&m.Address, "address", "", "the machine's loopback IPv4 address")
	fs.StringVar(&m.Role, "role", "", "init, join-control-plane or worker")
	fs.StringVar(&m.Name, "name", "", "the node name")
	fs.StringVar(&m.ProviderID, "provider-id", "", "the Node's spec.providerID")
	_ = fs.Parse(args)
	if err := m.validate(); err != nil {
		fmt.Fprintf(os.Stderr, "capw-node boot: %v\n", err)
		return 2
	}
	abs, err := filepath.Abs(m.Root)
	if err != nil {
		fmt.Fprintf(os.Stderr, "capw-node boot: %v\n", err)
		return 2
	}
	m.Root = abs
	if err := os.MkdirAll(m.logsDir(), 0o755); err != nil {
		fmt.Fprintf(os.Stderr, "capw-node boot: %v\n", err)
		return 1
	}
	if err := writeStatus(m.Root, "booting"); err != nil {
		fmt.Fprintf(os.Stderr, "capw-node boot: %v\n", err)
		return 1
	}
	closeLog := logTo(filepath.Join(m.logsDir(), "capw-node.log"))
	defer closeLog()

	sup := newSupervisor(m.logsDir())
	defer sup.stopAll()
	err = bootMachine(ctx, m, sup)
	if err != nil {
		if errors.Is(err, context.Canceled) && ctx.Err() != nil {
			log.Printf("stopped while booting")
			return 0
		}
		log.Printf("boot failed: %v", err)
		_ = writeStatus(m.Root, "failed: "+oneLine(err.Error()))
		return 1
	}
	log.Printf("stopping")
	return 0
}

func runReset(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("reset", flag.ExitOnError)
	root := fs.String("root", "", "the machine directory")
	binDir := fs.String("bin-dir", "", "the directory of the machine's Kubernetes binaries")
	_ = fs.Parse(args)
	if *root == "" {
		fmt.Fprintln(os.Stderr, "capw-node reset: --root is required")
		return 2
	}
	_ = binDir // the reset uses etcd's client library; kept for the contract's command line
	if err := resetMachine(ctx, *root); err != nil {
		fmt.Fprintf(os.Stderr, "capw-node reset: %v\n", err)
		return 1
	}
	return 0
}

func runLB(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("lb", flag.ExitOnError)
	listen := fs.String("listen", "", "IP:PORT to listen on")
	backends := fs.String("backends", "", "file listing host:port backends, one a line")
	_ = fs.Parse(args)
	if *listen == "" || *backends == "" {
		fmt.Fprintln(os.Stderr, "capw-node lb: --listen and --backends are required")
		return 2
	}
	if err := runLoadBalancer(ctx, *listen, *backends); err != nil {
		fmt.Fprintf(os.Stderr, "capw-node lb: %v\n", err)
		return 1
	}
	return 0
}

func runManaged(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("managed", flag.ExitOnError)
	var s managedService
	fs.StringVar(&s.Root, "root", "", "the service directory (simcloud's mcp-<n>)")
	fs.StringVar(&s.Address, "address", "", "the service's loopback IPv4 address")
	fs.IntVar(&s.Port, "port", 6443, "the API server's port")
	fs.StringVar(&s.Cluster, "cluster", "", "the cluster's name")
	_ = fs.Parse(args)
	if err := s.validate(); err != nil {
		fmt.Fprintf(os.Stderr, "capw-node managed: %v\n", err)
		return 2
	}
	abs, err := filepath.Abs(s.Root)
	if err != nil {
		fmt.Fprintf(os.Stderr, "capw-node managed: %v\n", err)
		return 2
	}
	s.Root = abs
	if err := os.MkdirAll(filepath.Join(s.Root, "logs"), 0o755); err != nil {
		fmt.Fprintf(os.Stderr, "capw-node managed: %v\n", err)
		return 1
	}
	if err := writeStatus(s.Root, "booting"); err != nil {
		fmt.Fprintf(os.Stderr, "capw-node managed: %v\n", err)
		return 1
	}
	closeLog := logTo(filepath.Join(s.Root, "logs", "capw-node.log"))
	defer closeLog()
	sup := newSupervisor(filepath.Join(s.Root, "logs"))
	defer sup.stopAll()
	if err := runManagedService(ctx, s, sup); err != nil {
		if errors.Is(err, context.Canceled) && ctx.Err() != nil {
			log.Printf("stopped while setting up")
			return 0
		}
		log.Printf("managed control plane failed: %v", err)
		_ = writeStatus(s.Root, "failed: "+oneLine(err.Error()))
		return 1
	}
	log.Printf("stopping")
	return 0
}

// logTo sends the agent's log to stderr and to path.
func logTo(path string) func() {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return func() {}
	}
	log.SetOutput(io.MultiWriter(os.Stderr, f))
	log.SetFlags(log.LstdFlags | log.Lmicroseconds)
	return func() { _ = f.Close() }
}
