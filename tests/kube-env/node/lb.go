package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// lbCheckInterval is how often the backends file is re-read and each backend health-checked.
const lbCheckInterval = time.Second

// parseBackends reads a backends file: one host:port a line; blank lines and lines starting
// with # are skipped. A malformed line is an error naming it.
func parseBackends(data string) ([]string, error) {
	var out []string
	sc := bufio.NewScanner(strings.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		host, port, err := net.SplitHostPort(line)
		if err != nil || host == "" || port == "" {
			return nil, fmt.Errorf("line %d: %q is not host:port", n, line)
		}
		out = append(out, line)
	}
	return out, nil
}

// backendPool is the set of healthy backends, picked round-robin.
type backendPool struct {
	mu      sync.Mutex
	healthy []string
	next    int
}

func (p *backendPool) set(healthy []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.healthy = healthy
}

// pick returns up to n healthy backends, starting at the next in round-robin order.
func (p *backendPool) pick() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.healthy) == 0 {
		return nil
	}
	start := p.next % len(p.healthy)
	p.next++
	out := append([]string{}, p.healthy[start:]...)
	return append(out, p.healthy[:start]...)
}

// lbFaultInterval is how often the load balancer looks for its silent file.
const lbFaultInterval = 250 * time.Millisecond

// silentFileName is the file beside the backends file that, while it exists, makes the load
// balancer silent (simcloud's cluster fault `"loadBalancer": "silent"`).
const silentFileName = "silent"

// runLoadBalancer is the cluster's load balancer: a TCP proxy over the backends that answer
// GET /readyz, as a cloud load balancer's health check would (TLS not verified), until ctx ends.
func runLoadBalancer(ctx context.Context, listen, backendsFile string) error {
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", listen, err)
	}
	log.Printf("load balancer on %s over the backends in %s", listen, backendsFile)
	return serveLoadBalancer(ctx, ln, backendsFile)
}

// serveLoadBalancer balances the connections of ln over the backends in backendsFile until ctx
// ends, and goes silent while the file `silent` beside it exists (see lbConns).
func serveLoadBalancer(ctx context.Context, ln net.Listener, backendsFile string) error {
	pool := &backendPool{}
	conns := &lbConns{forwarded: map[net.Conn]net.Conn{}}
	silentFile := filepath.Join(filepath.Dir(backendsFile), silentFileName)
	// Looked at once before the first connection: a balancer started while silent is silent.
	conns.watchSilent(silentFile)
	go checkBackends(ctx, backendsFile, pool)
	go func() {
		t := time.NewTicker(lbFaultInterval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				conns.watchSilent(silentFile)
			}
		}
	}()
	go func() {
		<-ctx.Done()
		ln.Close()
	}()
	for {
		conn, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			if errors.Is(err, net.ErrClosed) {
				return err
			}
			continue
		}
		if !conns.admit(conn) {
			go hold(conn)
			continue
		}
		go proxy(conn, pool, conns)
	}
}

// lbConns are the connections the load balancer forwards, and whether it is silent. A silent
// balancer stands for a hung API server: it still accepts connections but never forwards,
// answers nor closes them, and the connections it was forwarding when it turned silent are
// cut.
type lbConns struct {
	mu     sync.Mutex
	silent bool
	// forwarded maps each forwarded client connection to its backend connection (nil while
	// the backend is being dialled).
	forwarded map[net.Conn]net.Conn
}

// admit registers a new client connection to forward; false when the balancer is silent.
func (l *lbConns) admit(conn net.Conn) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.silent {
		return false
	}
	l.forwarded[conn] = nil
	return true
}

// attach records the backend connection of an admitted client connection; false when the
// client connection was cut meanwhile.
func (l *lbConns) attach(conn, upstream net.Conn) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.forwarded[conn]; !ok {
		return false
	}
	l.forwarded[conn] = upstream
	return true
}

// release forgets a client connection whose forwarding ended.
func (l *lbConns) release(conn net.Conn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.forwarded, conn)
}

// setSilent makes the balancer silent or forwarding; turning silent closes every forwarded
// connection, both ends. It returns whether anything changed and how many connections it cut.
func (l *lbConns) setSilent(silent bool) (changed bool, cut int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if silent == l.silent {
		return false, 0
	}
	l.silent = silent
	if silent {
		for conn, upstream := range l.forwarded {
			conn.Close()
			if upstream != nil {
				upstream.Close()
			}
			delete(l.forwarded, conn)
			cut++
		}
	}
	return true, cut
}

// watchSilent makes the balancer silent while file exists, logging each change.
func (l *lbConns) watchSilent(file string) {
	_, err := os.Stat(file)
	silent := err == nil
	changed, cut := l.setSilent(silent)
	switch {
	case !changed:
	case silent:
		log.Printf("silent while %s exists: accepting connections and leaving them hanging; %d forwarded connection(s) cut", file, cut)
	default:
		log.Printf("forwarding again: %s is gone", file)
	}
}

// hold keeps a connection accepted while silent open without answering it: it reads and drops
// what the client sends until the client closes it, then closes it too. Forwarding again does
// not release it, as a hung server's connections stay hung: a client that waits without a
// timeout stays stuck.
func hold(conn net.Conn) {
	_, _ = io.Copy(io.Discard, conn)
	conn.Close()
}

func checkBackends(ctx context.Context, file string, pool *backendPool) {
	client := insecureHTTPClient()
	client.Timeout = lbCheckInterval
	var lastErr string
	for {
		data, err := os.ReadFile(file)
		var backends []string
		if err == nil {
			backends, err = parseBackends(string(data))
		}
		if err != nil {
			if msg := err.Error(); msg != lastErr {
				log.Printf("backends file %s: %v", file, err)
				lastErr = msg
			}
		} else {
			lastErr = ""
		}
		healthy := make([]bool, len(backends))
		var wg sync.WaitGroup
		for i, b := range backends {
			wg.Add(1)
			go func() {
				defer wg.Done()
				healthy[i] = backendReady(ctx, client, b)
			}()
		}
		wg.Wait()
		var up []string
		for i, b := range backends {
			if healthy[i] {
				up = append(up, b)
			}
		}
		pool.set(up)
		select {
		case <-ctx.Done():
			return
		case <-time.After(lbCheckInterval):
		}
	}
}

func backendReady(ctx context.Context, client *http.Client, backend string) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+backend+"/readyz", nil)
	if err != nil {
		return false
	}
	resp, err := client.Do(req)
	if err != nil {
		return false
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// proxy forwards conn to the first healthy backend that accepts a connection, until either side
// closes or the balancer turns silent.
func proxy(conn net.Conn, pool *backendPool, conns *lbConns) {
	defer conns.release(conn)
	defer conn.Close()
	var upstream net.Conn
	for _, b := range pool.pick() {
		c, err := net.DialTimeout("tcp", b, 2*time.Second)
		if err == nil {
			upstream = c
			break
		}
	}
	if upstream == nil {
		return
	}
	if !conns.attach(conn, upstream) {
		_ = upstream.Close()
		return
	}
	splice(conn, upstream)
}
