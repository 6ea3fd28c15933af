// Package siminfra is capw's infrastructure provider for simcloud, written with capw's Go
// SDK: a network and a load balancer per cluster (the load balancer is the control-plane
// endpoint), and one instance per machine, over the host's wasi:http. It is the twin of the
// Rust plugins/sim-infra: the same config, the same requests, the same answers.
//
// It reads simcloud's bearer token from a granted secret, keys every create by the call's
// idempotency key (so a retry never creates twice), never waits for simcloud (it answers
// in-progress with a requeue hint instead) and hands simcloud's Retry-After to the host.
//
// Where to look: config.go for the config and its rules, client.go for requests and what
// their failures mean, cluster.go and machine.go for the extension point's functions,
// naming.go for how capw's identities become simcloud names and tokens, api.go for the wire
// types.
package siminfra

import "capw.dev/sdk/go/capw"

// Version is the provider's own version.
const Version = "0.1.0"

// Provider is the simcloud infrastructure provider. Stateless: everything it knows comes with
// the call or from simcloud.
type Provider struct{}

// Describe asks for the token secret under its default grant name. The HTTP authority is the
// config's endpoint, which differs per installation, so it is for the operator to grant.
func (Provider) Describe() capw.Description {
	return capw.Description{
		Name:    "go-sim-infra",
		Version: Version,
		Description: "Infrastructure on simcloud, written in Go: a network and a load balancer " +
			"per cluster, an instance per machine, over wasi:http.",
		ConfigSchema:    configSchema,
		RequestedGrants: capw.RequestedGrants{Secrets: []string{DefaultTokenSecret}},
	}
}

// ReconcileCluster is [ReconcileCluster] with a client for the call.
func (Provider) ReconcileCluster(ctx *capw.Context[Config]) (capw.ClusterState, error) {
	c, err := Connect(ctx)
	if err != nil {
		return capw.ClusterState{}, err
	}
	return ReconcileCluster(c, ctx)
}

// DeleteCluster is [DeleteCluster] with a client for the call.
func (Provider) DeleteCluster(ctx *capw.Context[Config]) (capw.Deletion, error) {
	c, err := Connect(ctx)
	if err != nil {
		return capw.Deletion{}, err
	}
	return DeleteCluster(c, ctx)
}

// ReconcileMachine is [ReconcileMachine] with a client for the call.
func (Provider) ReconcileMachine(ctx *capw.Context[Config], spec capw.MachineSpec) (capw.MachineStatus, error) {
	c, err := Connect(ctx)
	if err != nil {
		return capw.MachineStatus{}, err
	}
	return ReconcileMachine(c, ctx, spec)
}

// DeleteMachine is [DeleteMachine]; the instance is found by the idempotency key, not the
// name.
func (Provider) DeleteMachine(ctx *capw.Context[Config], _ capw.MachineRef) (capw.Deletion, error) {
	c, err := Connect(ctx)
	if err != nil {
		return capw.Deletion{}, err
	}
	return DeleteMachine(c, ctx)
}

// ListMachines is [ListMachines] with a client for the call.
func (Provider) ListMachines(ctx *capw.Context[Config]) ([]capw.ListedMachine, error) {
	c, err := Connect(ctx)
	if err != nil {
		return nil, err
	}
	return ListMachines(c, ctx)
}

// The provider serves the infrastructure point, all of it.
var _ capw.Infrastructure[Config] = Provider{}
