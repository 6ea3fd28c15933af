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

// runLoadBalancer is the cluster's load balancer: a TCP proxy over the backends that answer
// GET /readyz, as a cloud load balancer's health check would (TLS not verified), until ctx ends.
func runLoadBalancer(ctx context.Context, listen, backendsFile string) error {
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", listen, err)
	}
	pool := &backendPool{}
	go checkBackends(ctx, backendsFile, pool)
	go func() {
		<-ctx.Done()
		ln.Close()
	}()
	log.Printf("load balancer on %s over the backends in %s", listen, backendsFile)
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
		go proxy(conn, pool)
	}
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

func proxy(conn net.Conn, pool *backendPool) {
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
	defer upstream.Close()
	done := make(chan struct{}, 2)
	go func() {
		_, _ = io.Copy(upstream, conn)
		if tc, ok := upstream.(*net.TCPConn); ok {
			_ = tc.CloseWrite()
		}
		done <- struct{}{}
	}()
	go func() {
		_, _ = io.Copy(conn, upstream)
		if tc, ok := conn.(*net.TCPConn); ok {
			_ = tc.CloseWrite()
		}
		done <- struct{}{}
	}()
	<-done
	<-done
}
