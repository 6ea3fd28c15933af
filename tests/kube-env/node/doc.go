// Command capw-node is the machine agent of capw's real boot: it does on one simulated machine
// what cloud-init's kubeadm run and the kubelet would do on a real one, with the Kubernetes
// binaries of the machine's version (the --bin-dir) run as plain local processes on the
// machine's loopback address.
//
//	capw-node boot  --root DIR --bin-dir BIN --address IP --role init|join-control-plane|worker \
//	                --name NODE_NAME --provider-id PROVIDER_ID
//	capw-node reset --root DIR --bin-dir BIN
//	capw-node lb    --listen IP:PORT --backends FILE
//
// Start with [bootMachine] (boot.go): it reads the bootstrap data simcloud wrote under
// DIR/rootfs, derives this machine's kubeadm configuration (kubeadmconfig.go), has kubeadm make
// the leaf certificates and kubeconfigs from the cluster's CAs (kubeadm.go), starts etcd,
// kube-apiserver and kube-controller-manager with the flags kubeadm's static pod manifests would
// give them (components.go, supervisor.go), changes etcd's membership (etcd.go), discovers a
// cluster from a bootstrap token (discovery.go) and runs the kubelet stand-in (kubelet.go).
// The load balancer is lb.go; the status file status.go.
//
// # Layout of a machine directory
//
// The agent treats DIR/rootfs as the machine's filesystem, as kubeadm would: certificates in
// rootfs/etc/kubernetes/pki, kubeconfigs in rootfs/etc/kubernetes, etcd's data in
// rootfs/var/lib/etcd, the kubelet's client certificate in rootfs/var/lib/kubelet/pki. Its own
// files (the derived kubeadm configuration, kubeconfigs that reach the local API server, the
// machine state that reset reads) are in DIR/agent; every process logs to DIR/logs.
//
// # What is real and what stands in
//
// etcd, kube-apiserver, kube-controller-manager and kubeadm are the real programs. The kubelet
// cannot run here (no container runtime), so a stand-in registers the machine's Node and keeps
// it Ready; it runs no pods. There is no scheduler, kube-proxy or CoreDNS.
//
// # What comes next (day two)
//
//   - Removing a control-plane machine: `reset` already removes the machine's etcd member through
//     any member that answers. Scale-down and rollouts should call it before the machine is
//     deleted, and check first that the remaining members keep quorum (the state file holds the
//     member list, refreshed while the agent runs).
//   - Drain and health: the kubelet stand-in is the place for a drain to be observed (it has no
//     pods to evict, so a drain only cordons) and for health checks that should fail a Node (a
//     flag or file under DIR/agent that stops the heartbeats lets a test make a Node NotReady
//     the way a dead kubelet does).
//   - Rollouts that swap versions: each version's binaries come from --bin-dir, so an upgrade is
//     a new machine booted from another bin dir joining the same cluster (join-control-plane or
//     worker), then the old machine reset and deleted, as Cluster API's rolling update does. An
//     in-place upgrade would restart the children from another bin dir on the same data
//     directory; the supervisor keeps each child's command line so that is a restart with a new
//     binary path.
package main
