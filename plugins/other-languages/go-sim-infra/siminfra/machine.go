package siminfra

import (
	"encoding/base64"
	"fmt"
	"time"

	"capw.dev/sdk/go/capw"
)

// reconcile-machine, delete-machine and list-machines: one simcloud instance per machine,
// keyed by the machine's idempotency key.
//
// The idempotency key is the instance's client_token. simcloud never creates a second
// instance for a token, and never creates again for the token of a deleted instance, so a
// retried or late create can neither duplicate a machine nor bring a deleted one back.

// InstanceRequeue is when to look again at an instance that is pending or booting.
const InstanceRequeue = 2 * time.Second

// DeleteRequeue is when to look again at an instance being deleted.
const DeleteRequeue = 2 * time.Second

// ReconcileMachine reports the instance of ctx.IdempotencyKey(), creating it first when there
// is none. At most one instance ever exists for a key. When simcloud refuses the create
// because the key's instance was deleted (or the network has no address left), the answer is
// phase failed with simcloud's reason, and nothing is created: the host replaces the machine
// under a new key.
func ReconcileMachine(c *Client, ctx *capw.Context[Config], spec capw.MachineSpec) (capw.MachineStatus, error) {
	cluster := SimCluster(ctx.Cluster())
	key := ctx.IdempotencyKey()
	found, err := find(c, cluster, key)
	if err != nil {
		return capw.MachineStatus{}, err
	}
	if found != nil {
		return status(*found), nil
	}
	zone := spec.FailureDomain
	if zone == "" && len(ctx.Config.Zones) > 0 {
		zone = ctx.Config.Zones[0]
	}
	var created instance
	err = c.Post("/v1/instances", createRequest(cluster, key, spec, zone, ctx.Config.InstanceType), &created)
	switch {
	case err == nil:
		capw.Log.Info("instance created", "cluster", cluster, "machine", spec.Machine.Name,
			"instance", created.ID, "zone", created.Zone)
		return status(created), nil
	case Is(err, 409, codeConflict):
		return refused(apiMessage(err)), nil
	}
	return capw.MachineStatus{}, err
}

// DeleteMachine deletes the instance of ctx.IdempotencyKey(): deleted when no instance has
// the key any more, also when there never was one; in-progress while simcloud still lists it.
func DeleteMachine(c *Client, ctx *capw.Context[Config]) (capw.Deletion, error) {
	cluster := SimCluster(ctx.Cluster())
	key := ctx.IdempotencyKey()
	found, err := find(c, cluster, key)
	if err != nil || found == nil {
		return capw.Deleted, err
	}
	if err := c.Delete("/v1/instances/" + found.ID); err != nil {
		return capw.Deletion{}, err
	}
	capw.Log.Info("instance deleted", "cluster", cluster, "instance", found.ID)
	still, err := find(c, cluster, key)
	if err != nil {
		return capw.Deletion{}, err
	}
	if still == nil {
		return capw.Deleted, nil
	}
	return capw.DeletionInProgress(capw.NewInProgress("InstanceDeleting",
		fmt.Sprintf("instance %s is being deleted", still.ID)).After(DeleteRequeue)), nil
}

// ListMachines is every instance of the cluster, whoever created it.
func ListMachines(c *Client, ctx *capw.Context[Config]) ([]capw.ListedMachine, error) {
	var found instanceList
	if err := c.Get("/v1/instances"+Query("cluster", SimCluster(ctx.Cluster())), &found); err != nil {
		return nil, err
	}
	out := make([]capw.ListedMachine, 0, len(found.Instances))
	for _, i := range found.Instances {
		out = append(out, listed(i))
	}
	return out, nil
}

// find is the instance created with key in cluster, if it still exists.
func find(c *Client, cluster, key string) (*instance, error) {
	var found instanceList
	if err := c.Get("/v1/instances"+Query("cluster", cluster, "client_token", key), &found); err != nil {
		return nil, err
	}
	if len(found.Instances) == 0 {
		return nil, nil
	}
	return &found.Instances[0], nil
}

// createRequest is the create request for spec, keyed by key, in zone (simcloud's first
// when "") and of instanceType (simcloud's default when "").
func createRequest(cluster, key string, spec capw.MachineSpec, zone, instanceType string) createInstance {
	return createInstance{
		ClientToken:  key,
		Name:         spec.Machine.Name,
		Cluster:      cluster,
		Role:         Role(spec.Role),
		Zone:         zone,
		InstanceType: instanceType,
		Tags: map[string]string{
			TagCluster: cluster,
			TagMachine: spec.Machine.Name,
			TagPool:    spec.Pool,
		},
		BootstrapData: base64.StdEncoding.EncodeToString(spec.BootstrapData),
	}
}

// Role is simcloud's role for a machine role: both control-plane roles are control-plane.
func Role(r capw.MachineRole) string {
	if r == capw.RoleWorker {
		return roleWorker
	}
	return roleControlPlane
}

// Phase is the machine phase of an instance state; a state this build does not know (a newer
// simcloud's) counts as provisioning.
func Phase(state string) capw.MachinePhase {
	switch state {
	case statePending:
		return capw.PhasePending
	case stateRunning:
		return capw.PhaseRunning
	case stateFailed:
		return capw.PhaseFailed
	}
	return capw.PhaseProvisioning
}

// status is what the host learns of i: its phase, ids and addresses, and when to look again
// while it is neither running nor failed.
func status(i instance) capw.MachineStatus {
	phase := Phase(i.State)
	var reason, message string
	switch phase {
	case capw.PhasePending:
		reason, message = "InstancePending", fmt.Sprintf("instance %s is pending", i.ID)
	case capw.PhaseRunning:
		reason = "InstanceRunning"
	case capw.PhaseFailed:
		reason, message = "InstanceFailed", i.Reason
	default:
		reason, message = "InstanceBooting", fmt.Sprintf("instance %s is booting", i.ID)
	}
	ready := capw.ConditionFalse
	var requeue time.Duration
	switch phase {
	case capw.PhaseRunning:
		ready = capw.ConditionTrue
	case capw.PhaseFailed:
	default:
		requeue = InstanceRequeue
	}
	addresses := []capw.Address{}
	for _, a := range i.Addresses {
		if address, ok := address(a); ok {
			addresses = append(addresses, address)
		}
	}
	return capw.MachineStatus{
		ProviderID:    i.ProviderID,
		Phase:         phase,
		Addresses:     addresses,
		FailureDomain: i.Zone,
		Message:       message,
		RequeueAfter:  requeue,
		Conditions:    []capw.Condition{{Type: "InstanceReady", Status: ready, Reason: reason, Message: message}},
	}
}

// refused is the answer when simcloud refuses to create the instance for good (409 conflict).
func refused(reason string) capw.MachineStatus {
	if reason == "" {
		reason = "simcloud refused the create"
	}
	message := "simcloud refused to create the instance: " + reason
	return capw.MachineStatus{
		Phase:      capw.PhaseFailed,
		Addresses:  []capw.Address{},
		Message:    message,
		Conditions: []capw.Condition{{Type: "InstanceReady", Status: capw.ConditionFalse, Reason: "CreateRefused", Message: message}},
	}
}

// address is a simcloud address as a Kubernetes node address; false for kinds it does not
// know.
func address(a apiAddress) (capw.Address, bool) {
	kinds := map[string]capw.AddressKind{
		"private-ip":  capw.AddressInternalIP,
		"public-ip":   capw.AddressExternalIP,
		"private-dns": capw.AddressInternalDNS,
		"public-dns":  capw.AddressExternalDNS,
		"hostname":    capw.AddressHostname,
	}
	kind, ok := kinds[a.Kind]
	return capw.Address{Kind: kind, Address: a.Address}, ok
}

// listed is i as list-machines reports it: the Machine's name from its tag, else the
// instance's name.
func listed(i instance) capw.ListedMachine {
	name, ok := i.Tags[TagMachine]
	if !ok {
		name = i.Name
	}
	return capw.ListedMachine{IdempotencyKey: i.ClientToken, ProviderID: i.ProviderID, MachineName: name, Phase: Phase(i.State)}
}
