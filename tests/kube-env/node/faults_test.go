package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

func TestAComponentIsKilledWhileItsFaultFileExistsAndStartedAgainWhenItGoes(t *testing.T) {
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skipf("no sleep to stand in for a component: %v", err)
	}
	sup := newSupervisor(t.TempDir())
	t.Cleanup(sup.stopAll)
	first, err := sup.start("kube-apiserver", sleep, []string{"60"})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	w := newFaultWatcher(dir, sup, killableComponents)

	w.poll()
	if first.exited() {
		t.Fatal("the component exited without a fault")
	}

	// The file appears: the component is killed as a crash would end it, and stays down.
	file := filepath.Join(dir, "kube-apiserver-stopped")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	w.poll()
	if !first.exited() {
		t.Fatal("the component still runs under its fault")
	}
	var exit *exec.ExitError
	if !errors.As(first.err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("the component ended with %v, want SIGKILL", first.err)
	}
	w.poll()
	if sup.children[0] != first {
		t.Fatal("the component was started again while its fault file exists")
	}

	// The file goes: the same command line runs again, in the old one's place.
	if err := os.Remove(file); err != nil {
		t.Fatal(err)
	}
	w.poll()
	again := sup.children[0]
	if len(sup.children) != 1 || again == first || again.exited() {
		t.Fatalf("the component was not started again in its place: %d children, exited %v", len(sup.children), again.exited())
	}
	if again.cmd.Process.Pid == first.cmd.Process.Pid || again.bin != sleep || !slices.Equal(again.args, []string{"60"}) {
		t.Fatalf("started again as pid %d %s %v", again.cmd.Process.Pid, again.bin, again.args)
	}
	sup.stopAll()
	if !again.exited() {
		t.Fatal("stopAll left the component started again running")
	}
}

func TestAComponentThatExitedOnItsOwnIsNotStartedAgainByTheFaultWatcher(t *testing.T) {
	sup := newSupervisor(t.TempDir())
	c, err := sup.start("etcd", "/bin/sh", []string{"-c", "exit 3"})
	if err != nil {
		t.Fatal(err)
	}
	<-c.done
	w := newFaultWatcher(t.TempDir(), sup, killableComponents)
	w.poll()
	if sup.children[0] != c {
		t.Fatal("a component that exited on its own was started again without a fault")
	}
}

func TestAHeldBackKubeletRegistersItsNodeOnlyOnceTheFaultFileGoes(t *testing.T) {
	file := filepath.Join(t.TempDir(), "node-unregistered")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	client := fake.NewClientset()
	registered := make(chan struct{})
	k := &kubeletStandIn{
		client: client, name: "worker-1", providerID: "sim://instances/i-1", address: "127.1.0.9", version: "v1.35.4",
		unregisteredFile: file,
		onRegistered:     func() error { close(registered); return nil },
	}
	if !k.heldBack() {
		t.Fatal("the fault file is not seen")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- k.register(ctx) }()

	time.Sleep(300 * time.Millisecond)
	if _, err := client.CoreV1().Nodes().Get(ctx, "worker-1", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the Node was registered under the fault: %v", err)
	}
	if err := os.Remove(file); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(2*unregisteredCheckInterval + time.Second):
		t.Fatal("the Node did not register after the fault file went")
	}
	<-registered
	if _, err := client.CoreV1().Nodes().Get(ctx, "worker-1", metav1.GetOptions{}); err != nil {
		t.Fatalf("the Node is not there: %v", err)
	}
}

// lbThrough is an HTTPS client that reaches any address through the load balancer at lb.
func lbThrough(lb string, timeout time.Duration) *http.Client {
	return &http.Client{
		Timeout: timeout,
		Transport: &http.Transport{
			TLSClientConfig:   &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // a test backend
			DisableKeepAlives: true,
			DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
				return (&net.Dialer{}).DialContext(ctx, "tcp", lb)
			},
		},
	}
}

func TestASilentLoadBalancerAcceptsConnectionsAndNeverAnswersThenForwardsAgain(t *testing.T) {
	backend := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, "ok")
	}))
	defer backend.Close()
	dir := t.TempDir()
	backends := filepath.Join(dir, "backends")
	if err := os.WriteFile(backends, []byte(backend.Listener.Addr().String()+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- serveLoadBalancer(ctx, ln, backends) }()
	defer func() {
		cancel()
		<-served
	}()
	lb := ln.Addr().String()
	answers := func() bool {
		resp, err := lbThrough(lb, time.Second).Get("https://backend/readyz")
		if err != nil {
			return false
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return string(body) == "ok"
	}
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("%s within 5 s", what)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	waitFor("the load balancer did not forward", answers)

	// A connection it forwards: the backend's TLS handshake comes through.
	forwarded, err := tls.Dial("tcp", lb, &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // a test backend
	if err != nil {
		t.Fatal(err)
	}
	defer forwarded.Close()

	// Silent: the forwarded connection is cut, not left hanging.
	silent := filepath.Join(dir, silentFileName)
	if err := os.WriteFile(silent, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	_ = forwarded.SetReadDeadline(time.Now().Add(3 * time.Second))
	var ne net.Error
	if _, err := forwarded.Read(make([]byte, 1)); err == nil || (errors.As(err, &ne) && ne.Timeout()) {
		t.Fatalf("the forwarded connection was not cut when the load balancer turned silent: %v", err)
	}

	// A new connection is accepted and never answered nor closed.
	conn, err := net.DialTimeout("tcp", lb, time.Second)
	if err != nil {
		t.Fatalf("a silent load balancer refused a connection: %v", err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte("GET /readyz HTTP/1.0\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(700 * time.Millisecond))
	if n, err := conn.Read(make([]byte, 64)); !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("a silent load balancer answered: %d bytes, %v", n, err)
	}
	if answers() {
		t.Fatal("a request through the silent load balancer was answered")
	}

	// Forwarding again: new connections get answers.
	if err := os.Remove(silent); err != nil {
		t.Fatal(err)
	}
	waitFor("the load balancer did not forward again", answers)
}
