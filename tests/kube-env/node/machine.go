package main

import (
	"fmt"
	"net"
	"path/filepath"
)

// Roles a machine boots into.
const (
	roleInit             = "init"
	roleJoinControlPlane = "join-control-plane"
	roleWorker           = "worker"
)

// machine is the boot command line: who this machine is and where its files are.
type machine struct {
	Root, BinDir, Address, Role, Name, ProviderID string
}

func (m machine) validate() error {
	switch {
	case m.Root == "":
		return fmt.Errorf("--root is required")
	case m.BinDir == "":
		return fmt.Errorf("--bin-dir is required")
	case m.Name == "":
		return fmt.Errorf("--name is required")
	case m.ProviderID == "":
		return fmt.Errorf("--provider-id is required")
	}
	if ip := net.ParseIP(m.Address); ip == nil || ip.To4() == nil {
		return fmt.Errorf("--address %q is not an IPv4 address", m.Address)
	}
	switch m.Role {
	case roleInit, roleJoinControlPlane, roleWorker:
	default:
		return fmt.Errorf("--role %q is not one of init, join-control-plane, worker", m.Role)
	}
	return nil
}

func (m machine) isControlPlane() bool { return m.Role != roleWorker }

// rootfs is a path on the machine's filesystem.
func (m machine) rootfs(path string) string { return filepath.Join(m.Root, "rootfs", path) }

func (m machine) bootstrapDataPath() string { return m.rootfs("/run/kubeadm/kubeadm.yaml") }
func (m machine) kubernetesDir() string     { return m.rootfs("/etc/kubernetes") }
func (m machine) pkiDir() string            { return m.rootfs("/etc/kubernetes/pki") }
func (m machine) etcdDataDir() string       { return m.rootfs("/var/lib/etcd") }
func (m machine) kubeletPKIDir() string     { return m.rootfs("/var/lib/kubelet/pki") }
func (m machine) agentDir() string          { return filepath.Join(m.Root, "agent") }
func (m machine) logsDir() string           { return filepath.Join(m.Root, "logs") }

// faultsDir holds the fault files simcloud sets on this machine (faults.go).
func (m machine) faultsDir() string { return filepath.Join(m.Root, "faults") }

// kubeletStopFile is the fault simcloud sets to stop the kubelet stand-in's heartbeats and
// Pod updates.
func (m machine) kubeletStopFile() string { return filepath.Join(m.faultsDir(), "kubelet-stopped") }

// nodeUnregisteredFile is the fault simcloud sets to keep the kubelet stand-in from
// registering the machine's Node.
func (m machine) nodeUnregisteredFile() string {
	return filepath.Join(m.faultsDir(), "node-unregistered")
}

func (m machine) bin(name string) string { return filepath.Join(m.BinDir, name) }
func (m machine) pki(name string) string { return filepath.Join(m.pkiDir(), name) }

func (m machine) etcdClientURL() string { return "https://" + net.JoinHostPort(m.Address, "2379") }
func (m machine) etcdPeerURL() string   { return "https://" + net.JoinHostPort(m.Address, "2380") }
