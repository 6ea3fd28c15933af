// Command etcd is the test environment's etcd: a single-member etcd server (the
// go.etcd.io/etcd/server/v3 embed package) on loopback, for kube-apiserver's storage in
// tests. It runs until SIGTERM or SIGINT, then closes the server cleanly.
package main

import (
	"flag"
	"fmt"
	"net/url"
	"os"
	"os/signal"
	"syscall"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
)

func main() {
	dataDir := flag.String("data-dir", "", "directory for the member's data (required)")
	clientURL := flag.String("listen-client-url", "http://127.0.0.1:2379", "URL to serve clients on")
	peerURL := flag.String("listen-peer-url", "http://127.0.0.1:2380", "URL to serve peers on")
	flag.Parse()
	if *dataDir == "" {
		fail("--data-dir is required")
	}
	client, err := url.Parse(*clientURL)
	if err != nil {
		fail("--listen-client-url %q: %v", *clientURL, err)
	}
	peer, err := url.Parse(*peerURL)
	if err != nil {
		fail("--listen-peer-url %q: %v", *peerURL, err)
	}

	cfg := embed.NewConfig()
	cfg.Name = "capw-test"
	cfg.Dir = *dataDir
	cfg.ListenClientUrls = []url.URL{*client}
	cfg.AdvertiseClientUrls = []url.URL{*client}
	cfg.ListenPeerUrls = []url.URL{*peer}
	cfg.AdvertisePeerUrls = []url.URL{*peer}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	cfg.LogLevel = "warn"
	// Test data is thrown away with the environment: skipping fsync keeps writes fast.
	cfg.UnsafeNoFsync = true

	server, err := embed.StartEtcd(cfg)
	if err != nil {
		fail("starting etcd: %v", err)
	}
	select {
	case <-server.Server.ReadyNotify():
	case <-time.After(60 * time.Second):
		server.Close()
		fail("etcd was not ready after 60s")
	}
	fmt.Fprintf(os.Stderr, "etcd ready on %s\n", client)

	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT)
	select {
	case <-signals:
	case err := <-server.Err():
		server.Close()
		fail("etcd stopped: %v", err)
	}
	server.Close()
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "etcd: "+format+"\n", args...)
	os.Exit(1)
}
