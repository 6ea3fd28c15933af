// Command capw-node is the machine agent of capw's real boot: it does on one simulated machine
// what cloud-init's kubeadm run and the kubelet would do on a real one, with the Kubernetes
// binaries of the machine's version (the --bin-dir) run as plain local processes on the
// machine's loopback address.
//
//	capw-node boot  --root DIR --bin-dir BIN --address IP --role init|join-control-plane|worker \
//	                --name NODE_NAME --provider-id PROVIDER_ID
//	capw-node reset --root DIR --bin-dir BIN
//	capw-node lb    --listen IP:PORT --backends FILE
//	capw-node managed --root DIR --address IP --port PORT --cluster NAME
//	capw-node kubelet --kubeconfig FILE --name NODE --root DIR --images FILE --pod-cidr CIDR [--simulated]
//
// Start with [bootMachine] (boot.go): it reads the bootstrap data simcloud wrote under
// DIR/rootfs, derives this machine's kubeadm configuration (kubeadmconfig.go), has kubeadm make
// the leaf certificates and kubeconfigs from the cluster's CAs (kubeadm.go), starts etcd,
// kube-apiserver, kube-controller-manager and kube-scheduler with the flags kubeadm's static
// pod manifests would give them (components.go, supervisor.go), changes etcd's membership
// (etcd.go), discovers a cluster from a bootstrap token (discovery.go) and runs the kubelet
// stand-in (kubelet.go) with its pod runner (pods.go). The load balancer is lb.go; the status
// file status.go. A managed control plane (simcloud's /v1/managed-control-planes booted for
// real) is managed.go: the same components and kubeadm phases as an init, on the service's
// own address, with no Node, upgraded in place when simcloud asks for another version.
//
// `kubelet` is the management cluster's kubelet stand-in (kubelet_command.go): the same
// kubeletStandIn registering one Node, whose pod runner also runs Pods as local processes —
// each image mapped by an image table (images.go) to a program or an unpacked root file system,
// each container started through the hidden `container-exec` subcommand in a mount namespace of
// its own with its volumes bind-mounted (container_exec.go, volumes.go), with its environment
// (env.go), probes, restarts and back-off (processes.go, probes.go, backoff.go), hosts file
// (hosts.go) and the Pod's own address from the Node's pod CIDR. What it honours, refuses and
// ignores of a Pod is listed in refusals.go; claims of StorageClass capw-local get a local
// volume (provisioner.go).
//
// # Layout of a machine directory
//
// The agent treats DIR/rootfs as the machine's filesystem, as kubeadm would: certificates in
// rootfs/etc/kubernetes/pki, kubeconfigs in rootfs/etc/kubernetes, etcd's data in
// rootfs/var/lib/etcd, the kubelet's client certificate in rootfs/var/lib/kubelet/pki. Its own
// files (the derived kubeadm configuration, kubeconfigs that reach the local API server, the
// machine state that reset reads) are in DIR/agent; every process logs to DIR/logs. DIR/faults
// holds the faults simcloud sets, one file each, in force while the file exists:
// kubelet-stopped (the kubelet stand-in sends no heartbeats and updates no Pods),
// node-unregistered (it does not register its Node: the machine boots, its Node never
// appears), kube-apiserver-stopped and etcd-stopped (the component is killed with SIGKILL and
// kept down; faults.go). A load balancer is silent while the file `silent` beside its backends
// file exists: it accepts connections and never answers them (lb.go).
//
// # What is real and what stands in
//
// etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kubeadm are the real
// programs. The kubelet cannot run here (no container runtime), so a stand-in registers the
// machine's Node and keeps it Ready, and runs the Pods bound to it whose containers are all of
// the pause image, the one image it can honestly run on a workload cluster's machine (a
// container that does nothing): it reports them Running and Ready, and when one is deleted
// reports its containers exited and deletes it, as the kubelet does once they stopped, without
// waiting out the grace period. A Pod of any other image stays Pending with the reason
// ImageNotRunnable. The Pods' addresses come from the Node's podCIDR and reach nothing: there
// is no pod network, kube-proxy or CoreDNS. The management cluster's process kubelet
// (`kubelet`) runs real processes instead, for the images its table maps, on addresses of its
// pod CIDR made local to the machine.
//
// # What comes next (day two)
//
//   - Removing a control-plane machine: the host removes its etcd member before the machine
//     goes; `reset` removing it too stays as a second line.
//   - Drain and health: drains are done by the host, with evictions through the workload
//     cluster's API; the stand-in runs pause Pods, so a drain meets PodDisruptionBudgets and
//     waits for its evicted Pods to go as on a real Node. The kubelet-stopped fault (a file
//     under DIR/faults) stops the heartbeats and the pod runner both, so a Node goes NotReady
//     and its Pods stay as a dead kubelet leaves them; node-unregistered, kube-apiserver-stopped
//     and etcd-stopped fail a machine in the other ways health checks look for.
//   - Rollouts that swap versions: each version's binaries come from --bin-dir, so an upgrade is
//     a new machine booted from another bin dir joining the same cluster (join-control-plane or
//     worker), then the old machine reset and deleted, as Cluster API's rolling update does. An
//     in-place upgrade would restart the children from another bin dir on the same data
//     directory; the supervisor keeps each child's command line so that is a restart with a new
//     binary path.
package main
