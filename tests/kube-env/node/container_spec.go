package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/kubernetes/third_party/forked/golang/expansion"
)

// How a container of a running Pod becomes a container-exec spec, and how its probes run.

// defaultPath is the PATH a binary image's process gets, a container runtime's default.
const defaultPath = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// execSpec is what container c runs with: its environment, expanded command line, mounts,
// hosts file, hostname, user and groups.
func (w *podWorker) execSpec(c *containerRun) (execSpec, error) {
	base := []string{defaultPath}
	if c.image.kind == imageRootfs {
		base = append([]string{defaultPath}, c.image.entry.Env...)
	}
	hostname := podHostname(w.pod)
	if w.pod.Spec.HostNetwork {
		hostname = ""
	} else {
		base = append(base, "HOSTNAME="+hostname)
	}
	src := newEnvSource(w.rt.client, w.pod, w.podIP, w.hostIP, w.rt.apiServer)
	env, err := src.containerEnv(w.ctx, c.spec, base)
	if err != nil {
		return execSpec{}, err
	}
	expanded := c.spec
	expanded.Command = expandArgs(c.spec.Command, env)
	expanded.Args = expandArgs(c.spec.Args, env)
	var argv []string
	if c.image.kind == imagePause {
		argv = []string{w.rt.self, "pause"} // beside other containers, pause is a process too
	} else if argv, err = c.image.argv(expanded); err != nil {
		return execSpec{}, &configError{err.Error()}
	}
	spec := execSpec{
		Argv: argv, Env: environ(env), Dir: c.spec.WorkingDir, Hosts: w.hostsPath(), Hostname: hostname,
		MountPointsLog: w.rt.mountPointsLog(),
	}
	if c.image.kind == imageRootfs {
		spec.Rootfs = c.image.entry.Rootfs
		if spec.Dir == "" {
			spec.Dir = c.image.entry.WorkingDir
		}
	} else if c.image.kind == imageBinary {
		if _, err := os.Stat(c.image.entry.Binary); err != nil {
			return execSpec{}, fmt.Errorf("the program of image %s: %w", c.spec.Image, err)
		}
	}
	w.mu.Lock()
	dirs := w.volumes.dirs
	w.mu.Unlock()
	for i, m := range c.spec.VolumeMounts {
		source, ok := dirs[m.Name]
		if !ok {
			return execSpec{}, &configError{fmt.Sprintf("volumeMounts[%d]: no volume %q", i, m.Name)}
		}
		sub := m.SubPath
		if m.SubPathExpr != "" {
			vars := map[string]string{}
			for _, v := range env {
				vars[v.name] = v.value
			}
			sub = expansion.Expand(m.SubPathExpr, expansion.MappingFuncFor(vars))
		}
		if sub != "" {
			if !safeSubPath(sub) {
				return execSpec{}, &configError{fmt.Sprintf("volumeMounts[%d]: subPath %q leaves its volume", i, sub)}
			}
			source = filepath.Join(source, sub)
			if _, err := os.Stat(source); os.IsNotExist(err) {
				if err := os.MkdirAll(source, 0o750); err != nil {
					return execSpec{}, err
				}
			}
		}
		spec.Mounts = append(spec.Mounts, execMount{Source: source, Target: m.MountPath, ReadOnly: m.ReadOnly})
	}
	uid, gid, groups := identity(w.pod, c.spec)
	if nonRoot(w.pod, c.spec) && (uid == nil || *uid == 0) {
		return execSpec{}, &configError{"container has runAsNonRoot and image will run as root"}
	}
	spec.UID, spec.GID, spec.Groups = uid, gid, groups
	return spec, nil
}

// identity is the user, group and supplemental groups a container runs as: the container's
// securityContext over the Pod's; the Pod's fsGroup joins the groups. nil: root's, the
// image's user as far as the stand-in knows.
func identity(pod *corev1.Pod, c corev1.Container) (uid, gid *int64, groups []int64) {
	if psc := pod.Spec.SecurityContext; psc != nil {
		uid, gid = psc.RunAsUser, psc.RunAsGroup
		groups = append(groups, psc.SupplementalGroups...)
		if psc.FSGroup != nil {
			groups = append(groups, *psc.FSGroup)
		}
	}
	if sc := c.SecurityContext; sc != nil {
		if sc.RunAsUser != nil {
			uid = sc.RunAsUser
		}
		if sc.RunAsGroup != nil {
			gid = sc.RunAsGroup
		}
	}
	if uid != nil && gid == nil {
		gid = new(int64) // a user without a group runs in group 0, as runc does
	}
	return uid, gid, groups
}

func nonRoot(pod *corev1.Pod, c corev1.Container) bool {
	if c.SecurityContext != nil && c.SecurityContext.RunAsNonRoot != nil {
		return *c.SecurityContext.RunAsNonRoot
	}
	return pod.Spec.SecurityContext != nil && ptrTrue(pod.Spec.SecurityContext.RunAsNonRoot)
}

func writeJSON(path string, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o600)
}

func metaTime(t time.Time) metav1.Time { return metav1.NewTime(t.Truncate(time.Second)) }

// probe runs c's probes against its instance inst until it exits: the startup probe first
// (liveness and readiness wait for it), then liveness and readiness side by side.
func (w *podWorker) probe(c *containerRun, inst *containerInstance) {
	ctx, cancel := context.WithCancel(w.ctx)
	go func() {
		<-inst.exited
		cancel()
	}()
	startedAt := time.Now()
	spec := c.spec
	go func() {
		if p := spec.StartupProbe; p != nil {
			if !w.probeLoop(ctx, c, inst, p, startedAt, func(ok bool) bool {
				if ok {
					w.setProbeResult(c, func() { c.started = true })
					return false // done
				}
				w.killForProbe(c, inst, "Startup")
				return false
			}) {
				return
			}
		}
		w.mu.Lock()
		if c.instance == inst && spec.ReadinessProbe == nil {
			c.ready = c.started
		}
		w.mu.Unlock()
		w.rt.notify()
		if p := spec.LivenessProbe; p != nil {
			go w.probeLoop(ctx, c, inst, p, startedAt, func(ok bool) bool {
				if !ok {
					w.killForProbe(c, inst, "Liveness")
					return false
				}
				return true
			})
		}
		if p := spec.ReadinessProbe; p != nil {
			go w.probeLoop(ctx, c, inst, p, startedAt, func(ok bool) bool {
				w.setProbeResult(c, func() {
					if c.instance == inst {
						c.ready = ok
					}
				})
				return true
			})
		}
	}()
}

// probeLoop tries p every period from initialDelaySeconds after startedAt, and calls decided
// with each result the thresholds reach, until decided returns false or ctx ends. It returns
// whether the probe succeeded last (for the startup probe: whether the container started).
func (w *podWorker) probeLoop(ctx context.Context, c *containerRun, inst *containerInstance, p *corev1.Probe, startedAt time.Time, decided func(ok bool) bool) bool {
	counter := newProbeCounter(p)
	select {
	case <-ctx.Done():
		return false
	case <-time.After(time.Until(startedAt.Add(time.Duration(p.InitialDelaySeconds) * time.Second))):
	}
	ticker := time.NewTicker(probePeriod(p))
	defer ticker.Stop()
	for {
		err := w.tryProbe(ctx, c, inst, p)
		if ctx.Err() != nil {
			return false
		}
		if result, ok := counter.observe(err == nil); ok {
			if !decided(result) {
				return result
			}
		}
		select {
		case <-ctx.Done():
			return false
		case <-ticker.C:
		}
	}
}

func (w *podWorker) setProbeResult(c *containerRun, set func()) {
	w.mu.Lock()
	set()
	w.mu.Unlock()
	w.rt.notify()
}

// killForProbe ends inst after a startup or liveness failure, with the Pod's grace period; its
// loop restarts it as its restart policy says.
func (w *podWorker) killForProbe(c *containerRun, inst *containerInstance, which string) {
	w.mu.Lock()
	inst.killMessage = fmt.Sprintf("Container %s failed %s probe, will be restarted", c.spec.Name, which)
	w.mu.Unlock()
	w.logf("container %s failed its %s probe: killing it", c.spec.Name, which)
	grace := w.gracePeriod()
	if p := c.spec.LivenessProbe; which == "Liveness" && p.TerminationGracePeriodSeconds != nil {
		grace = time.Duration(*p.TerminationGracePeriodSeconds) * time.Second
	}
	inst.kill(grace)
}

// tryProbe runs p once.
func (w *podWorker) tryProbe(ctx context.Context, c *containerRun, inst *containerInstance, p *corev1.Probe) error {
	timeout := probeTimeout(p)
	switch {
	case p.HTTPGet != nil:
		return probeHTTP(ctx, p.HTTPGet, c.spec, w.podIP, timeout)
	case p.TCPSocket != nil:
		return probeTCP(ctx, p.TCPSocket, c.spec, w.podIP, timeout)
	case p.Exec != nil:
		return w.probeExec(ctx, inst, p.Exec.Command, timeout)
	}
	return fmt.Errorf("no probe handler")
}

// probeExec runs command in the container's context: its spec with another command line,
// through container-exec.
func (w *podWorker) probeExec(ctx context.Context, inst *containerInstance, command []string, timeout time.Duration) error {
	data, err := os.ReadFile(inst.specPath)
	if err != nil {
		return err
	}
	var spec execSpec
	if err := json.Unmarshal(data, &spec); err != nil {
		return err
	}
	spec.Argv = command
	// One file per try: liveness and readiness may run at once.
	f, err := os.CreateTemp(w.dir, ".probe-*.json")
	if err != nil {
		return err
	}
	probePath := f.Name()
	f.Close()
	defer os.Remove(probePath)
	if err := writeJSON(probePath, spec); err != nil {
		return err
	}
	cmd := w.rt.containerCommand(probePath)
	if err := spawn(cmd); err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(timeout):
	case <-ctx.Done():
	}
	_ = cmd.Process.Kill()
	<-done
	return fmt.Errorf("command timed out after %s", timeout)
}
