package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"
)

// machineState is what `reset` needs to know about a booted machine, kept in DIR/agent/state.json.
type machineState struct {
	Role    string `json:"role"`
	Name    string `json:"name"`
	PeerURL string `json:"etcdPeerURL,omitempty"`
	PKIDir  string `json:"pkiDir,omitempty"`
	// EtcdEndpoints are the client URLs of the etcd members, this machine's first; refreshed
	// while the agent runs so that reset can reach a member that joined later.
	EtcdEndpoints []string `json:"etcdEndpoints,omitempty"`
}

func statePath(root string) string { return filepath.Join(root, "agent", "state.json") }

func saveState(m machine, endpoints []string) error {
	st := machineState{Role: m.Role, Name: m.Name, EtcdEndpoints: endpoints}
	if m.isControlPlane() {
		st.PeerURL, st.PKIDir = m.etcdPeerURL(), m.pkiDir()
	}
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	path := statePath(m.Root)
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return os.Rename(tmp, path)
}

func loadState(root string) (*machineState, error) {
	data, err := os.ReadFile(statePath(root))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var st machineState
	if err := json.Unmarshal(data, &st); err != nil {
		return nil, fmt.Errorf("parsing %s: %w", statePath(root), err)
	}
	return &st, nil
}

// refreshEtcdMembers keeps the state file's member list current.
func refreshEtcdMembers(ctx context.Context, m machine) {
	t := time.NewTicker(30 * time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		st, err := loadState(m.Root)
		if err != nil || st == nil {
			continue
		}
		urls, err := etcdClientURLs(ctx, m, st.EtcdEndpoints)
		if err != nil {
			continue
		}
		if err := saveState(m, append([]string{m.etcdClientURL()}, without(urls, m.etcdClientURL())...)); err != nil {
			log.Printf("saving the etcd member list: %v", err)
		}
	}
}

func without(list []string, drop string) []string {
	var out []string
	for _, s := range list {
		if s != drop {
			out = append(out, s)
		}
	}
	return out
}

// resetMachine is `kubeadm reset`'s etcd step: a control-plane machine removes its own etcd
// member through any member that answers. Nothing to do for a worker, a machine that never got
// as far as etcd, or a member already removed.
func resetMachine(ctx context.Context, root string) error {
	st, err := loadState(root)
	if err != nil {
		return err
	}
	if st == nil || st.PeerURL == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, resetTimeout)
	defer cancel()
	// etcd refuses to remove a member while the cluster would be unhealthy without it, for
	// a few seconds after any member started ("etcdserver: unhealthy cluster"): a scale-down
	// right after a scale-up meets that, so the removal is retried until the bound.
	for {
		err := removeEtcdMember(ctx, st.PKIDir, st.Name, st.PeerURL, st.EtcdEndpoints)
		if err == nil {
			return nil
		}
		log.Printf("reset: %v; retrying", err)
		select {
		case <-ctx.Done():
			return err
		case <-time.After(time.Second):
		}
	}
}

// resetTimeout bounds `reset`; simcloud waits a little longer for it.
const resetTimeout = 25 * time.Second
