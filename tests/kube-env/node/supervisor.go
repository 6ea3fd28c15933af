package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// child is one component process of the machine, with the command line it was started
// with, so that it can be started again the same way.
type child struct {
	name    string
	bin     string
	args    []string
	logPath string
	cmd     *exec.Cmd
	done    chan struct{}
	err     error
}

// exited reports whether the process has ended.
func (c *child) exited() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// supervisor starts the machine's components and stops them in reverse order. It is used from
// one goroutine: the main one, whose thread the children's Pdeathsig is tied to (main.go).
type supervisor struct {
	logsDir  string
	children []*child
}

func newSupervisor(logsDir string) *supervisor { return &supervisor{logsDir: logsDir} }

// start runs bin with args; its output goes to DIR/logs/<name>.log. The process gets SIGKILL
// if the agent dies (Pdeathsig), so no component outlives its machine's agent.
func (s *supervisor) start(name, bin string, args []string) (*child, error) {
	c, err := s.spawn(name, bin, args)
	if err != nil {
		return nil, err
	}
	s.children = append(s.children, c)
	return c, nil
}

// spawn starts a child without adding it to the list.
func (s *supervisor) spawn(name, bin string, args []string) (*child, error) {
	logPath := filepath.Join(s.logsDir, name+".log")
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening the log of %s: %w", name, err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout = f
	cmd.Stderr = f
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, fmt.Errorf("starting %s (%s): %w", name, bin, err)
	}
	c := &child{name: name, bin: bin, args: args, logPath: logPath, cmd: cmd, done: make(chan struct{})}
	go func() {
		c.err = cmd.Wait()
		f.Close()
		close(c.done)
		log.Printf("%s (pid %d) exited: %v", name, cmd.Process.Pid, c.err)
	}()
	log.Printf("started %s (pid %d), log %s", name, cmd.Process.Pid, logPath)
	return c, nil
}

// find is the index of the child called name.
func (s *supervisor) find(name string) (int, error) {
	for i, c := range s.children {
		if c.name == name {
			return i, nil
		}
	}
	return -1, fmt.Errorf("this machine runs no %s", name)
}

// kill sends SIGKILL to the child called name, as a crash would end it, and waits until it
// is gone. A child that has exited already is left as it is.
func (s *supervisor) kill(name string) error {
	i, err := s.find(name)
	if err != nil {
		return err
	}
	c := s.children[i]
	if c.exited() {
		return nil
	}
	if err := c.cmd.Process.Kill(); err != nil && !c.exited() {
		return fmt.Errorf("killing %s (pid %d): %w", name, c.cmd.Process.Pid, err)
	}
	select {
	case <-c.done:
		return nil
	case <-time.After(10 * time.Second):
		return fmt.Errorf("%s (pid %d) still runs 10 seconds after SIGKILL", name, c.cmd.Process.Pid)
	}
}

// restart starts the child called name again with its command line, once it has exited; the
// new process takes the old one's place in the list, so stopAll stops it in the same order.
// A child that still runs is left as it is.
func (s *supervisor) restart(name string) (*child, error) {
	i, err := s.find(name)
	if err != nil {
		return nil, err
	}
	old := s.children[i]
	if !old.exited() {
		return old, nil
	}
	c, err := s.spawn(name, old.bin, old.args)
	if err != nil {
		return nil, err
	}
	s.children[i] = c
	return c, nil
}

// restartWith stops the child called name (SIGTERM, SIGKILL after 10 seconds) and starts it
// again with its command line and another binary, bin: an in-place upgrade. The new process
// takes the old one's place in the list.
func (s *supervisor) restartWith(name, bin string) (*child, error) {
	i, err := s.find(name)
	if err != nil {
		return nil, err
	}
	old := s.children[i]
	old.stop()
	c, err := s.spawn(name, bin, old.args)
	if err != nil {
		return nil, err
	}
	s.children[i] = c
	return c, nil
}

// stop sends SIGTERM to the child, and SIGKILL if it still runs after 10 seconds; it returns
// once the child has exited.
func (c *child) stop() {
	if c.exited() {
		return
	}
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-c.done:
	case <-time.After(10 * time.Second):
		_ = c.cmd.Process.Kill()
		<-c.done
	}
}

// stopAll sends SIGTERM to every child, last started first, and SIGKILL to any still running
// after 10 seconds.
func (s *supervisor) stopAll() {
	for i := len(s.children) - 1; i >= 0; i-- {
		s.children[i].stop()
	}
}

// lastLogLine is the last non-empty line of a log, for error messages.
func lastLogLine(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return "(no log)"
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Size() > 64*1024 {
		_, _ = f.Seek(-64*1024, io.SeekEnd)
	}
	last := "(empty log)"
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1024*1024), 1024*1024)
	for sc.Scan() {
		if line := strings.TrimSpace(sc.Text()); line != "" {
			last = line
		}
	}
	if len(last) > 400 {
		last = last[:400] + "..."
	}
	return last
}

// waitHealthy polls url until it answers 200 (and, when want is set, a body containing it),
// the child exits, or timeout passes; the error names the component, the URL and the last line
// of its log.
func waitHealthy(ctx context.Context, c *child, url string, client *http.Client, want string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	var last string
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		resp, err := client.Do(req)
		if err == nil {
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK && (want == "" || strings.Contains(string(body), want)) {
				return nil
			}
			last = fmt.Sprintf("HTTP %d", resp.StatusCode)
		} else {
			last = err.Error()
		}
		if c.exited() {
			return fmt.Errorf("%s exited before it became healthy at %s (%v): %s", c.name, url, c.err, lastLogLine(c.logPath))
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s did not become healthy at %s within %s (last answer: %s): %s", c.name, url, timeout, last, lastLogLine(c.logPath))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// httpClientTrusting is a client that verifies servers against the CA in caFile.
func httpClientTrusting(caFile string) (*http.Client, error) {
	pem, err := os.ReadFile(caFile)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("no certificate in %s", caFile)
	}
	return &http.Client{
		Timeout:   3 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}},
	}, nil
}

// insecureHTTPClient checks health endpoints whose serving certificate is self-signed
// (kube-controller-manager's and kube-scheduler's), as a kubelet's probe would.
func insecureHTTPClient() *http.Client {
	return &http.Client{
		Timeout:   3 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}, //nolint:gosec // a health probe
	}
}
