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

// child is one component process of the machine.
type child struct {
	name    string
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

// supervisor starts the machine's components and stops them in reverse order.
type supervisor struct {
	logsDir  string
	children []*child
}

func newSupervisor(logsDir string) *supervisor { return &supervisor{logsDir: logsDir} }

// start runs bin with args; its output goes to DIR/logs/<name>.log. The process gets SIGKILL
// if the agent dies (Pdeathsig), so no component outlives its machine's agent.
func (s *supervisor) start(name, bin string, args []string) (*child, error) {
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
	c := &child{name: name, logPath: logPath, cmd: cmd, done: make(chan struct{})}
	go func() {
		c.err = cmd.Wait()
		f.Close()
		close(c.done)
		log.Printf("%s (pid %d) exited: %v", name, cmd.Process.Pid, c.err)
	}()
	log.Printf("started %s (pid %d), log %s", name, cmd.Process.Pid, logPath)
	s.children = append(s.children, c)
	return c, nil
}

// stopAll sends SIGTERM to every child, last started first, and SIGKILL to any still running
// after 10 seconds.
func (s *supervisor) stopAll() {
	for i := len(s.children) - 1; i >= 0; i-- {
		c := s.children[i]
		if c.exited() {
			continue
		}
		_ = c.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-c.done:
		case <-time.After(10 * time.Second):
			_ = c.cmd.Process.Kill()
			<-c.done
		}
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
