package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Probes as the kubelet runs them: after initialDelaySeconds, every periodSeconds, each try
// bounded by timeoutSeconds; a result flips after successThreshold successes or
// failureThreshold failures in a row. httpGet succeeds on a status from 200 to 399 (https
// certificates are not verified, as the kubelet's are not), tcpSocket on a connection, exec on
// exit code 0 (exec.go runs the command in the container's context).

// probeCounter turns probe tries into a result with the thresholds.
type probeCounter struct {
	successThreshold, failureThreshold int32
	successes, failures                int32
}

func newProbeCounter(p *corev1.Probe) probeCounter {
	c := probeCounter{successThreshold: p.SuccessThreshold, failureThreshold: p.FailureThreshold}
	if c.successThreshold < 1 {
		c.successThreshold = 1
	}
	if c.failureThreshold < 1 {
		c.failureThreshold = 3
	}
	return c
}

// observe counts one try; it reports a result when one is reached (true: success threshold,
// false: failure threshold), and decided is false otherwise.
func (c *probeCounter) observe(ok bool) (result, decided bool) {
	if ok {
		c.failures = 0
		c.successes++
		return true, c.successes >= c.successThreshold
	}
	c.successes = 0
	c.failures++
	return false, c.failures >= c.failureThreshold
}

func probePeriod(p *corev1.Probe) time.Duration {
	if p.PeriodSeconds < 1 {
		return 10 * time.Second
	}
	return time.Duration(p.PeriodSeconds) * time.Second
}

func probeTimeout(p *corev1.Probe) time.Duration {
	if p.TimeoutSeconds < 1 {
		return time.Second
	}
	return time.Duration(p.TimeoutSeconds) * time.Second
}

// resolvePort is a probe's port: a number, or the name of one of the container's ports.
func resolvePort(port intstr.IntOrString, c corev1.Container) (int, error) {
	if port.Type == intstr.Int {
		return port.IntValue(), nil
	}
	for _, p := range c.Ports {
		if p.Name == port.StrVal {
			return int(p.ContainerPort), nil
		}
	}
	if n, err := strconv.Atoi(port.StrVal); err == nil {
		return n, nil
	}
	return 0, fmt.Errorf("no port named %q", port.StrVal)
}

// probeHTTP tries an httpGet probe against host (the Pod's address unless the probe names one).
func probeHTTP(ctx context.Context, g *corev1.HTTPGetAction, c corev1.Container, podIP string, timeout time.Duration) error {
	port, err := resolvePort(g.Port, c)
	if err != nil {
		return err
	}
	host := g.Host
	if host == "" {
		host = podIP
	}
	scheme := "http"
	if g.Scheme == corev1.URISchemeHTTPS {
		scheme = "https"
	}
	u := url.URL{Scheme: scheme, Host: net.JoinHostPort(host, strconv.Itoa(port))}
	if parsed, err := url.Parse(g.Path); err == nil {
		u.Path, u.RawQuery = parsed.Path, parsed.RawQuery
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return err
	}
	req.Header.Set("User-Agent", "kube-probe/capw-node")
	for _, h := range g.HTTPHeaders {
		if h.Name == "Host" {
			req.Host = h.Value
			continue
		}
		req.Header.Add(h.Name, h.Value)
	}
	resp, err := probeHTTPClient.Do(req)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 10*1024))
	resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode >= 400 {
		return fmt.Errorf("HTTP probe failed with statuscode: %d", resp.StatusCode)
	}
	return nil
}

// probeHTTPClient verifies no certificate and keeps no connection, as the kubelet's prober.
var probeHTTPClient = &http.Client{
	Transport: &http.Transport{
		TLSClientConfig:   &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // as the kubelet's probes
		DisableKeepAlives: true,
		Proxy:             nil,
	},
}

func probeTCP(ctx context.Context, s *corev1.TCPSocketAction, c corev1.Container, podIP string, timeout time.Duration) error {
	port, err := resolvePort(s.Port, c)
	if err != nil {
		return err
	}
	host := s.Host
	if host == "" {
		host = podIP
	}
	d := net.Dialer{Timeout: timeout}
	conn, err := d.DialContext(ctx, "tcp", net.JoinHostPort(host, strconv.Itoa(port)))
	if err != nil {
		return err
	}
	return conn.Close()
}
