package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

// The process side of the kubelet stand-in's pod runner (`capw-node kubelet`): a Pod whose
// images the image table maps to programs or root file systems runs as local processes, one
// per container, each started through `capw-node container-exec` (container_exec.go) in its
// own mount namespace. podWorker (pod_worker.go) runs one Pod: its volumes, init containers,
// sidecars and containers, their probes, restarts and back-off, and its termination; the sync
// (pods_processes.go) reports what it sees of it (process_status.go) and ends it when the Pod
// is deleted.

// processRuntime is what the Pods' workers share.
type processRuntime struct {
	// root is the kubelet's directory: DIR/pods/<ns>_<name>_<uid> per Pod, DIR/volumes per
	// PersistentVolume.
	root   string
	images imageTable
	// backoffBase is the first wait of the crash back-off (the kubelet's 10 s unless a test
	// shortens it).
	backoffBase time.Duration
	// self is the capw-node program, run as `container-exec`.
	self string
	// apiServer is the API server's host:port, for the containers' KUBERNETES_SERVICE_*.
	apiServer string
	client    kubernetes.Interface
	workers   map[types.UID]*podWorker
	// changed is signalled when a worker's state changes, so that the sync reports it soon.
	changed chan struct{}
}

func newProcessRuntime(root string, images imageTable, client kubernetes.Interface) (*processRuntime, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("finding capw-node's own program: %w", err)
	}
	return &processRuntime{
		root: root, images: images, backoffBase: defaultBackoffBase, self: self, client: client,
		workers: map[types.UID]*podWorker{}, changed: make(chan struct{}, 1),
	}, nil
}

func (rt *processRuntime) notify() {
	select {
	case rt.changed <- struct{}{}:
	default:
	}
}

func (rt *processRuntime) podDir(pod *corev1.Pod) string {
	return filepath.Join(rt.root, "pods", fmt.Sprintf("%s_%s_%s", pod.Namespace, pod.Name, pod.UID))
}

func (rt *processRuntime) mountPointsLog() string {
	return filepath.Join(rt.root, "created-mount-points")
}

// stopAll stops every Pod's processes, each with its grace period, and waits for them.
func (rt *processRuntime) stopAll() {
	var wg sync.WaitGroup
	for _, w := range rt.workers {
		wg.Add(1)
		go func() { defer wg.Done(); w.stop(w.gracePeriod()) }()
	}
	wg.Wait()
	mountPointsCleanup(rt.mountPointsLog())
}

// spawnThread starts every container process from one goroutine locked to its thread:
// Pdeathsig fires when the thread that forked a child ends, and a thread the runtime may
// retire would take the child with it.
var spawnThread = sync.OnceValue(func() chan spawnRequest {
	reqs := make(chan spawnRequest)
	go func() {
		runtime.LockOSThread()
		for r := range reqs {
			r.done <- r.cmd.Start()
		}
	}()
	return reqs
})

type spawnRequest struct {
	cmd  *exec.Cmd
	done chan error
}

// spawn starts cmd from the spawning thread.
func spawn(cmd *exec.Cmd) error {
	done := make(chan error, 1)
	spawnThread() <- spawnRequest{cmd: cmd, done: done}
	return <-done
}

// containerCommand is `capw-node container-exec --spec FILE` as a container's process: in new
// mount and UTS namespaces, its own process group (so that SIGKILL reaches its children too),
// killed if the agent dies.
func (rt *processRuntime) containerCommand(specPath string) *exec.Cmd {
	cmd := exec.Command(rt.self, "container-exec", "--spec", specPath)
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Unshareflags: syscall.CLONE_NEWNS | syscall.CLONE_NEWUTS,
		Setpgid:      true,
		Pdeathsig:    syscall.SIGKILL,
	}
	cmd.Env = []string{}
	return cmd
}
