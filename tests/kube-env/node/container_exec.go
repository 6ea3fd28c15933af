package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// `capw-node container-exec --spec FILE` (hidden) is the last step of starting a container
// of the process kubelet stand-in, run as the container's process itself: the runner starts
// it in a mount namespace and a UTS namespace of its own (CLONE_NEWNS|CLONE_NEWUTS; Go makes
// the new mount namespace's mounts private before it runs, so nothing done here reaches the
// machine), and it bind-mounts the volumes and the Pod's hosts file, chroots into the image's
// root file system for a rootfs image, sets the hostname, the working directory, the groups
// and the user, and execs the program. Exec probes run through it too, in a namespace like the
// container's (Go cannot join another process's mount namespace: setns needs a single thread).

// execMount is one bind mount of a container.
type execMount struct {
	Source   string `json:"source"`
	Target   string `json:"target"` // inside the container's file system
	ReadOnly bool   `json:"readOnly,omitempty"`
}

// execSpec is what a container runs with, written by the runner as DIR/pods/…/<container>.json
// (0600: the environment can hold secrets).
type execSpec struct {
	Argv     []string    `json:"argv"`
	Env      []string    `json:"env"`
	Dir      string      `json:"dir,omitempty"`
	Rootfs   string      `json:"rootfs,omitempty"` // empty: the machine's file system
	Mounts   []execMount `json:"mounts,omitempty"`
	Hosts    string      `json:"hosts,omitempty"`
	Hostname string      `json:"hostname,omitempty"`
	UID      *int64      `json:"uid,omitempty"`
	GID      *int64      `json:"gid,omitempty"`
	Groups   []int64     `json:"groups,omitempty"`
	// MountPointsLog is where each directory or file created on the machine's file system as
	// a mount point is recorded (a binary container's mountPath that did not exist): the
	// runner removes what it can of them when it stops (mountPointsCleanup).
	MountPointsLog string `json:"mountPointsLog,omitempty"`
}

func runContainerExec(args []string) int {
	fs := flag.NewFlagSet("container-exec", flag.ExitOnError)
	specPath := fs.String("spec", "", "the container's spec file")
	_ = fs.Parse(args)
	data, err := os.ReadFile(*specPath)
	if err != nil {
		fmt.Fprintf(os.Stderr, "capw-node container-exec: %v\n", err)
		return 127
	}
	var spec execSpec
	if err := json.Unmarshal(data, &spec); err != nil {
		fmt.Fprintf(os.Stderr, "capw-node container-exec: %s: %v\n", *specPath, err)
		return 127
	}
	err = execContainer(spec)
	fmt.Fprintf(os.Stderr, "capw-node container-exec: %v\n", err)
	return 127
}

// execContainer sets up the container's view of the machine and execs its program; it
// returns only on failure.
func execContainer(spec execSpec) error {
	if len(spec.Argv) == 0 {
		return errors.New("no program")
	}
	root := spec.Rootfs
	inside := func(p string) string {
		if root == "" {
			return p
		}
		return filepath.Join(root, p)
	}
	if root != "" {
		// A root file system gets the machine's /proc, /sys and /dev, as a runtime mounts them.
		for _, d := range []string{"/proc", "/sys", "/dev"} {
			if err := os.MkdirAll(inside(d), 0o755); err != nil {
				return err
			}
			if err := bindMount(d, inside(d), false); err != nil {
				return err
			}
		}
	}
	var created []string
	for _, m := range spec.Mounts {
		made, err := makeMountPoint(m.Source, inside(m.Target))
		if err != nil {
			return fmt.Errorf("mount point %s: %w", m.Target, err)
		}
		if root == "" {
			created = append(created, made...)
		}
		if err := bindMount(m.Source, inside(m.Target), m.ReadOnly); err != nil {
			return err
		}
	}
	if root == "" && spec.MountPointsLog != "" && len(created) > 0 {
		if err := appendLines(spec.MountPointsLog, created); err != nil {
			return err
		}
	}
	if spec.Hosts != "" {
		if _, err := makeMountPoint(spec.Hosts, inside("/etc/hosts")); err != nil {
			return err
		}
		if err := bindMount(spec.Hosts, inside("/etc/hosts"), true); err != nil {
			return err
		}
	}
	if root != "" {
		if err := syscall.Chroot(root); err != nil {
			return fmt.Errorf("chroot %s: %w", root, err)
		}
		if err := os.Chdir("/"); err != nil {
			return err
		}
	}
	if spec.Hostname != "" {
		if err := syscall.Sethostname([]byte(spec.Hostname)); err != nil {
			return fmt.Errorf("sethostname: %w", err)
		}
	}
	if spec.Dir != "" {
		if err := os.MkdirAll(spec.Dir, 0o755); err != nil {
			return fmt.Errorf("workingDir %s: %w", spec.Dir, err)
		}
		if err := os.Chdir(spec.Dir); err != nil {
			return fmt.Errorf("workingDir %s: %w", spec.Dir, err)
		}
	}
	program, err := lookPathIn(spec.Argv[0], spec.Env)
	if err != nil {
		return err
	}
	// Groups first, then the group, then the user: once the user is not root, it may not
	// change the others.
	if spec.UID != nil || spec.GID != nil || len(spec.Groups) > 0 {
		groups := make([]int, 0, len(spec.Groups))
		for _, g := range spec.Groups {
			groups = append(groups, int(g))
		}
		if err := syscall.Setgroups(groups); err != nil {
			return fmt.Errorf("setgroups: %w", err)
		}
	}
	if spec.GID != nil {
		if err := syscall.Setgid(int(*spec.GID)); err != nil {
			return fmt.Errorf("setgid %d: %w", *spec.GID, err)
		}
	}
	if spec.UID != nil {
		parent := os.Getppid()
		if err := syscall.Setuid(int(*spec.UID)); err != nil {
			return fmt.Errorf("setuid %d: %w", *spec.UID, err)
		}
		// A change of user clears the parent-death signal the runner set: set it again, so
		// that the container still dies with the agent, and end now if the agent is gone.
		if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_SET_PDEATHSIG, uintptr(syscall.SIGKILL), 0); errno != 0 {
			return fmt.Errorf("prctl(PR_SET_PDEATHSIG): %w", errno)
		}
		if os.Getppid() != parent {
			return errors.New("the kubelet stand-in is gone")
		}
	}
	if err := syscall.Exec(program, spec.Argv, spec.Env); err != nil {
		return fmt.Errorf("exec %s: %w", program, err)
	}
	return nil
}

// makeMountPoint creates target when missing, as a directory when source is one, else as an
// empty file; it returns what it created, the outermost first.
func makeMountPoint(source, target string) ([]string, error) {
	if _, err := os.Lstat(target); err == nil {
		return nil, nil
	}
	info, err := os.Stat(source)
	if err != nil {
		return nil, err
	}
	var missing []string
	for p := filepath.Dir(target); ; p = filepath.Dir(p) {
		if _, err := os.Lstat(p); err == nil || p == "/" || p == "." {
			break
		}
		missing = append([]string{p}, missing...)
	}
	if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
		return nil, err
	}
	if info.IsDir() {
		err = os.Mkdir(target, 0o755)
	} else {
		var f *os.File
		f, err = os.OpenFile(target, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
		if err == nil {
			err = f.Close()
		}
	}
	if err != nil {
		return nil, err
	}
	return append(missing, target), nil
}

// bindMount mounts source on target, read-only when asked (a bind mount takes the read-only
// flag only on a remount).
func bindMount(source, target string, readOnly bool) error {
	if err := syscall.Mount(source, target, "", syscall.MS_BIND|syscall.MS_REC, ""); err != nil {
		return fmt.Errorf("bind-mounting %s on %s: %w", source, target, err)
	}
	if readOnly {
		if err := syscall.Mount("", target, "", syscall.MS_BIND|syscall.MS_REMOUNT|syscall.MS_RDONLY|syscall.MS_REC, ""); err != nil {
			return fmt.Errorf("making %s read-only: %w", target, err)
		}
	}
	return nil
}

// lookPathIn finds a program named without a slash in the PATH of env (the container's, or
// the usual one), as a container runtime does.
func lookPathIn(name string, env []string) (string, error) {
	if strings.Contains(name, "/") {
		return name, nil
	}
	path := "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
		}
	}
	for _, dir := range filepath.SplitList(path) {
		p := filepath.Join(dir, name)
		if info, err := os.Stat(p); err == nil && !info.IsDir() && info.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s: executable file not found in $PATH", name)
}

func appendLines(path string, lines []string) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	_, err = f.WriteString(strings.Join(lines, "\n") + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// mountPointsCleanup removes the mount points that containers created on the machine's file
// system (recorded in log), the innermost first, once no container runs: only those still
// empty go, so nothing a process wrote is lost.
func mountPointsCleanup(log string) {
	data, err := os.ReadFile(log)
	if err != nil {
		return
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	seen := map[string]bool{}
	for i := len(lines) - 1; i >= 0; i-- {
		p := lines[i]
		if p == "" || seen[p] {
			continue
		}
		seen[p] = true
		if info, err := os.Lstat(p); err == nil && (info.IsDir() || info.Size() == 0) {
			_ = os.Remove(p)
		}
	}
	_ = os.Remove(log)
}

// runPause is `capw-node pause` (hidden), the pause image's program in a Pod run as processes:
// it does nothing until SIGTERM or SIGINT, then exits 0.
func runPause(ctx context.Context) int {
	<-ctx.Done()
	return 0
}
