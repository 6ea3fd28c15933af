package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"testing"
)

// TestMain lets the test binary be capw-node where the runner re-executes itself (the hidden
// container-exec and pause subcommands) and where a test runs the process kubelet, and a
// small server a container can run (CAPW_NODE_TEST_PROGRAM in its environment).
func TestMain(m *testing.M) {
	switch os.Getenv("CAPW_NODE_TEST_PROGRAM") {
	case "http-ready":
		os.Exit(serveReadyWhileFileExists(os.Getenv("LISTEN"), os.Getenv("READY_FILE")))
	}
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case "container-exec":
			os.Exit(runContainerExec(os.Args[2:]))
		case "kubelet":
			ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
			defer stop()
			os.Exit(runKubelet(ctx, os.Args[2:]))
		case "pause":
			ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
			defer stop()
			os.Exit(runPause(ctx))
		}
	}
	os.Exit(m.Run())
}

// serveReadyWhileFileExists answers /ready with 200 while file exists, 503 otherwise.
func serveReadyWhileFileExists(listen, file string) int {
	l, err := net.Listen("tcp", listen)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println("listening on", listen)
	err = http.Serve(l, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := os.Stat(file); err != nil {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ok")
	}))
	fmt.Fprintln(os.Stderr, err)
	return 1
}
