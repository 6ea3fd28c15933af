package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// podWorker runs one Pod's containers as processes, from its volumes to its termination; the
// sync reads it through snapshot (process_status.go).

// configRetryInterval is how often a container whose configuration cannot be made yet (a
// missing Secret, ConfigMap or key) is tried again.
const configRetryInterval = 2 * time.Second

// containerKind is where a container stands in its Pod.
type containerKind int

const (
	kindMain containerKind = iota
	kindInit
	kindSidecar
)

// containerRun is one container of a running Pod: its current instance and its history.
// Its fields are guarded by the worker's mutex.
type containerRun struct {
	spec  corev1.Container
	kind  containerKind
	image resolvedImage

	state corev1.ContainerState
	// lastTerminated is how the latest instance ended, priorTerminated the one before.
	lastTerminated, priorTerminated *corev1.ContainerStateTerminated
	restartCount                    int32
	started, ready                  bool
	backoff                         crashBackoff
	// instance is the running process, nil between instances.
	instance *containerInstance
	// done is set once the container will not run again (its restart policy says so, or the
	// Pod is stopping), with its last exit code.
	done     bool
	exitCode int32
}

// containerInstance is one process of a container.
type containerInstance struct {
	cmd      *exec.Cmd
	pid      int
	specPath string
	exited   chan struct{}
	// killMessage is why the runner killed it (a failed probe), for its terminated state.
	killMessage string
}

// podWorker runs one Pod's containers.
type podWorker struct {
	rt            *processRuntime
	pod           *corev1.Pod
	dir           string
	podIP, hostIP string

	ctx    context.Context
	cancel context.CancelFunc
	// stopped is closed once every process of the Pod has ended after a stop.
	stopped  chan struct{}
	stopOnce sync.Once

	hostsMu sync.Mutex

	mu    sync.Mutex
	inits []*containerRun
	mains []*containerRun
	// setupWaiting is why containers are not created yet (volumes or configuration), nil
	// once they are.
	setupWaiting *corev1.ContainerStateWaiting
	initialized  bool
	// finished is set when the Pod's containers all ended for good (restartPolicy Never or
	// OnFailure), or an init container failed with restartPolicy Never.
	finished bool
	stopping bool
	volumes  volumeSet
}

func newPodWorker(rt *processRuntime, pod *corev1.Pod, podIP, hostIP string) *podWorker {
	w := &podWorker{rt: rt, pod: pod.DeepCopy(), dir: rt.podDir(pod), podIP: podIP, hostIP: hostIP, stopped: make(chan struct{})}
	w.ctx, w.cancel = context.WithCancel(context.Background())
	newRun := func(c corev1.Container, kind containerKind) *containerRun {
		return &containerRun{
			spec: c, kind: kind, image: rt.images.resolve(c.Image), backoff: newCrashBackoff(rt.backoffBase),
			state: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}},
		}
	}
	for _, c := range pod.Spec.InitContainers {
		kind := kindInit
		if sidecar(c) {
			kind = kindSidecar
		}
		r := newRun(c, kind)
		r.state.Waiting.Reason = "PodInitializing"
		w.inits = append(w.inits, r)
	}
	for _, c := range pod.Spec.Containers {
		r := newRun(c, kindMain)
		if len(pod.Spec.InitContainers) > 0 {
			r.state.Waiting.Reason = "PodInitializing"
		}
		w.mains = append(w.mains, r)
	}
	return w
}

// gracePeriod is how long the Pod's processes get between SIGTERM and SIGKILL: the deletion's
// grace period, else the Pod's terminationGracePeriodSeconds, else 30 s.
func (w *podWorker) gracePeriod() time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case w.pod.DeletionGracePeriodSeconds != nil:
		return time.Duration(*w.pod.DeletionGracePeriodSeconds) * time.Second
	case w.pod.Spec.TerminationGracePeriodSeconds != nil:
		return time.Duration(*w.pod.Spec.TerminationGracePeriodSeconds) * time.Second
	}
	return 30 * time.Second
}

func (w *podWorker) logf(format string, args ...any) {
	log.Printf("Pod %s/%s: "+format, append([]any{w.pod.Namespace, w.pod.Name}, args...)...)
}

// start runs the Pod in the background.
func (w *podWorker) start() {
	go w.run()
}

func (w *podWorker) run() {
	if !w.setup() {
		return
	}
	for _, c := range w.inits {
		if c.kind == kindSidecar {
			go w.loop(c)
			if !w.waitStarted(c) {
				return
			}
			continue
		}
		exit, ok := w.runToCompletion(c)
		if !ok {
			return
		}
		if exit != 0 {
			w.finish() // restartPolicy Never: the Pod fails
			return
		}
	}
	w.mu.Lock()
	w.initialized = true
	w.mu.Unlock()
	w.rt.notify()
	var wg sync.WaitGroup
	for _, c := range w.mains {
		wg.Add(1)
		go func() { defer wg.Done(); w.loop(c) }()
	}
	wg.Wait()
	if w.ctx.Err() == nil {
		w.finish()
	}
}

// setup makes the Pod's directory, hosts file and volumes, trying again while what they need
// does not exist yet; false when the Pod is stopped first.
func (w *podWorker) setup() bool {
	for {
		err := w.trySetup()
		if err == nil {
			w.mu.Lock()
			w.setupWaiting = nil
			w.mu.Unlock()
			w.rt.notify()
			return true
		}
		reason := "ContainerCreating"
		var cfg *configError
		if errors.As(err, &cfg) {
			reason = "CreateContainerConfigError"
		}
		w.mu.Lock()
		changed := w.setupWaiting == nil || w.setupWaiting.Message != err.Error()
		w.setupWaiting = &corev1.ContainerStateWaiting{Reason: reason, Message: err.Error()}
		w.mu.Unlock()
		if changed {
			w.logf("not started yet: %v", err)
			w.rt.notify()
		}
		select {
		case <-w.ctx.Done():
			return false
		case <-time.After(configRetryInterval):
		}
	}
}

func (w *podWorker) trySetup() error {
	if err := os.MkdirAll(w.dir, 0o750); err != nil {
		return err
	}
	if err := w.refreshHosts(); err != nil {
		return err
	}
	maker := w.volumeMaker()
	set, err := maker.make(w.ctx, w.claimDir)
	if err != nil {
		return err
	}
	w.mu.Lock()
	w.volumes = set
	w.mu.Unlock()
	if !set.refreshAt.IsZero() {
		go w.refreshTokens()
	}
	return nil
}

func (w *podWorker) volumeMaker() *volumeMaker {
	return &volumeMaker{client: w.rt.client, pod: w.pod, podDir: w.dir, podIP: w.podIP, hostIP: w.hostIP, now: time.Now}
}

func (w *podWorker) hostsPath() string { return filepath.Join(w.dir, "etc-hosts") }

// refreshHosts writes the Pod's hosts file when it changed. The sync and the worker's set-up
// both do; one at a time.
func (w *podWorker) refreshHosts() error {
	w.hostsMu.Lock()
	defer w.hostsMu.Unlock()
	return writeHostsFile(w.hostsPath(), hostsFile(w.pod, w.podIP))
}

// refreshTokens requests the Pod's service account tokens again at 80% of their lifetime.
func (w *podWorker) refreshTokens() {
	for {
		w.mu.Lock()
		at := w.volumes.refreshAt
		w.mu.Unlock()
		select {
		case <-w.ctx.Done():
			return
		case <-time.After(time.Until(at)):
		}
		next, err := w.volumeMaker().refreshTokens(w.ctx)
		if err != nil {
			if w.ctx.Err() != nil {
				return
			}
			w.logf("refreshing its service account tokens: %v", err)
			next = time.Now().Add(10 * time.Second)
		}
		w.mu.Lock()
		w.volumes.refreshAt = next
		w.mu.Unlock()
		if next.IsZero() {
			return
		}
	}
}

// waitStarted waits until a sidecar has started (its startup probe passed); false when the Pod
// is stopped first.
func (w *podWorker) waitStarted(c *containerRun) bool {
	for {
		w.mu.Lock()
		started := c.started
		w.mu.Unlock()
		if started {
			return true
		}
		select {
		case <-w.ctx.Done():
			return false
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// runToCompletion runs an init container until it exits 0, restarting it after a failure
// unless the Pod's restartPolicy is Never; ok is false when the Pod is stopped first.
func (w *podWorker) runToCompletion(c *containerRun) (exit int32, ok bool) {
	w.loop(c)
	w.mu.Lock()
	defer w.mu.Unlock()
	return c.exitCode, w.ctx.Err() == nil
}

// restarts reports whether a container that exited with exit is started again: a sidecar
// always, an init container until it succeeds (unless the Pod's restartPolicy is Never), a
// container as the Pod's restartPolicy says (Always when unset).
func restarts(kind containerKind, policy corev1.RestartPolicy, exit int32) bool {
	switch {
	case kind == kindSidecar:
		return true
	case kind == kindInit:
		return exit != 0 && policy != corev1.RestartPolicyNever
	}
	switch policy {
	case corev1.RestartPolicyNever:
		return false
	case corev1.RestartPolicyOnFailure:
		return exit != 0
	}
	return true
}

// loop runs container c, again after each exit as its restart policy says, with the crash
// back-off between, until it is done or the Pod is stopped.
func (w *podWorker) loop(c *containerRun) {
	ranBefore := false
	for w.ctx.Err() == nil {
		inst, err := w.startContainer(c, ranBefore)
		var exit int32
		var finishedAt time.Time
		if err != nil {
			w.failedStart(c, err)
			var cfg *configError
			if errors.As(err, &cfg) {
				// What the container needs does not exist yet: the kubelet waits for it
				// whatever the restart policy, and so does the stand-in.
				select {
				case <-w.ctx.Done():
				case <-time.After(configRetryInterval):
				}
				continue
			}
			exit, finishedAt = 128, time.Now()
		} else {
			ranBefore = true
			w.probe(c, inst)
			<-inst.exited
			exit, finishedAt = w.exited(c, inst)
		}
		if w.ctx.Err() != nil {
			break
		}
		if !restarts(c.kind, w.pod.Spec.RestartPolicy, exit) {
			break
		}
		w.mu.Lock()
		wait := c.backoff.next(finishedAt)
		if err == nil && wait > 0 {
			c.state = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{
				Reason:  "CrashLoopBackOff",
				Message: fmt.Sprintf("back-off %s restarting failed container=%s pod=%s_%s(%s)", wait, c.spec.Name, w.pod.Name, w.pod.Namespace, w.pod.UID),
			}}
		}
		w.mu.Unlock()
		w.rt.notify()
		select {
		case <-w.ctx.Done():
		case <-time.After(wait):
		}
	}
	w.mu.Lock()
	c.done = true
	w.mu.Unlock()
	w.rt.notify()
}

// failedStart records that c could not be started (its process did not start, or its
// configuration cannot be made): it waits with the reason, as the kubelet reports it.
func (w *podWorker) failedStart(c *containerRun, err error) {
	reason := "RunContainerError"
	var cfg *configError
	if errors.As(err, &cfg) {
		reason = "CreateContainerConfigError"
	}
	w.logf("container %s not started: %v", c.spec.Name, err)
	w.mu.Lock()
	c.state = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: err.Error()}}
	c.exitCode = 128
	w.mu.Unlock()
	w.rt.notify()
}

// exited records the end of an instance of c: its terminated state, and the last one.
func (w *podWorker) exited(c *containerRun, inst *containerInstance) (int32, time.Time) {
	state := inst.cmd.ProcessState
	exit := int32(state.ExitCode())
	if ws, ok := state.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		exit = 128 + int32(ws.Signal())
	}
	reason := "Completed"
	if exit != 0 {
		reason = "Error"
	}
	now := time.Now()
	w.mu.Lock()
	defer w.mu.Unlock()
	started := now
	if c.state.Running != nil {
		started = c.state.Running.StartedAt.Time
	}
	term := &corev1.ContainerStateTerminated{
		ExitCode: exit, Reason: reason, Message: inst.killMessage,
		StartedAt: metaTime(started), FinishedAt: metaTime(now), ContainerID: containerID(w.pod, c.spec.Name),
	}
	c.state = corev1.ContainerState{Terminated: term}
	c.priorTerminated, c.lastTerminated = c.lastTerminated, term
	c.instance = nil
	c.started, c.ready = false, false
	c.exitCode = exit
	w.logf("container %s (pid %d) exited with %d", c.spec.Name, inst.pid, exit)
	w.rt.notify()
	return exit, now
}

// startContainer starts an instance of c.
// A restart (ranBefore) counts in its restartCount.
func (w *podWorker) startContainer(c *containerRun, ranBefore bool) (*containerInstance, error) {
	spec, err := w.execSpec(c)
	if err != nil {
		return nil, err
	}
	specPath := filepath.Join(w.dir, c.spec.Name+".json")
	if err := writeJSON(specPath, spec); err != nil {
		return nil, err
	}
	logFile, err := os.OpenFile(filepath.Join(w.dir, c.spec.Name+".log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o640)
	if err != nil {
		return nil, err
	}
	cmd := w.rt.containerCommand(specPath)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	w.mu.Lock()
	if w.stopping {
		w.mu.Unlock()
		logFile.Close()
		return nil, errors.New("the Pod is stopping")
	}
	if err := spawn(cmd); err != nil {
		w.mu.Unlock()
		logFile.Close()
		return nil, fmt.Errorf("starting container %s: %w", c.spec.Name, err)
	}
	inst := &containerInstance{cmd: cmd, pid: cmd.Process.Pid, specPath: specPath, exited: make(chan struct{})}
	c.instance = inst
	if ranBefore {
		c.restartCount++
	}
	c.state = corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metaTime(time.Now())}}
	c.started = c.spec.StartupProbe == nil
	c.ready = false
	w.mu.Unlock()
	go func() {
		_ = cmd.Wait()
		logFile.Close()
		close(inst.exited)
	}()
	w.logf("container %s started (pid %d)", c.spec.Name, inst.pid)
	w.rt.notify()
	return inst, nil
}

// kill ends an instance: SIGTERM, then SIGKILL to its process group after grace. It returns
// once the process has exited.
func (inst *containerInstance) kill(grace time.Duration) {
	select {
	case <-inst.exited:
		return
	default:
	}
	_ = syscall.Kill(inst.pid, syscall.SIGTERM)
	select {
	case <-inst.exited:
		_ = syscall.Kill(-inst.pid, syscall.SIGKILL) // what it left behind in its group
		return
	case <-time.After(grace):
	}
	_ = syscall.Kill(-inst.pid, syscall.SIGKILL)
	<-inst.exited
}

// stop ends the Pod's processes: SIGTERM to the containers, then to the sidecars once the
// containers ended (last started first), SIGKILL to whatever still runs when grace is over.
// It returns once every process has ended.
func (w *podWorker) stop(grace time.Duration) {
	w.stopOnce.Do(func() {
		w.mu.Lock()
		w.stopping = true
		w.mu.Unlock()
		w.cancel()
		deadline := time.Now().Add(grace)
		killAll := func(runs []*containerRun) {
			var wg sync.WaitGroup
			for _, c := range runs {
				w.mu.Lock()
				inst := c.instance
				w.mu.Unlock()
				if inst == nil {
					continue
				}
				wg.Add(1)
				go func() { defer wg.Done(); inst.kill(max(time.Until(deadline), 0)) }()
			}
			wg.Wait()
		}
		killAll(w.mains)
		for i := len(w.inits) - 1; i >= 0; i-- {
			killAll(w.inits[i : i+1])
		}
		// The loops record the exits; wait until they have.
		for !w.allExited() {
			time.Sleep(20 * time.Millisecond)
		}
		close(w.stopped)
		w.rt.notify()
	})
	<-w.stopped
}

func (w *podWorker) allExited() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, c := range append(append([]*containerRun{}, w.inits...), w.mains...) {
		if c.instance != nil {
			return false
		}
	}
	return true
}

// finish ends a Pod whose containers are done for good: its sidecars are stopped, and it is
// reported Succeeded or Failed.
func (w *podWorker) finish() {
	w.mu.Lock()
	w.finished = true
	w.mu.Unlock()
	go w.stop(w.gracePeriod())
	w.rt.notify()
}

// isStopped reports whether every process of a stopped Pod has ended.
func (w *podWorker) isStopped() bool {
	select {
	case <-w.stopped:
		return true
	default:
		return false
	}
}

// pid is the process of container name's current instance, 0 when none runs.
func (w *podWorker) pid(name string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, c := range append(append([]*containerRun{}, w.inits...), w.mains...) {
		if c.spec.Name == name && c.instance != nil {
			return c.instance.pid
		}
	}
	return 0
}

// cleanup removes the Pod's volumes once it is gone; its logs stay in its directory.
func (w *podWorker) cleanup() {
	_ = os.RemoveAll(filepath.Join(w.dir, "volumes"))
	for _, c := range append(append([]*containerRun{}, w.inits...), w.mains...) {
		_ = os.Remove(filepath.Join(w.dir, c.spec.Name+".json"))
	}
}
