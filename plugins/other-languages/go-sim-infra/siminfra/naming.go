package siminfra

// How capw's identities become simcloud names, client tokens and tags. Everything here is
// derived from the call alone, so every retry of a call, on any host replica, computes the
// same names and tokens: that is what makes creates idempotent.

import "capw.dev/sdk/go/capw"

// Tags every instance carries.
const (
	// TagCluster holds the simcloud cluster name an instance was created for.
	TagCluster = "capw.dev/cluster"
	// TagMachine holds the name of the Machine an instance was created for.
	TagMachine = "capw.dev/machine"
	// TagPool holds the pool of the Machine (control-plane or a worker pool's name).
	TagPool = "capw.dev/pool"
)

// defaultNamespace is the namespace whose clusters keep their plain name in simcloud.
const defaultNamespace = "default"

// SimCluster is the name simcloud knows the cluster by: the Cluster's name in the default
// namespace (always so in embedded mode), <namespace>.<name> elsewhere. A Kubernetes
// namespace never contains a ".", so clusters of one name in two namespaces never meet.
func SimCluster(c capw.ClusterRef) string {
	if c.Namespace == "" || c.Namespace == defaultNamespace {
		return c.Name
	}
	return c.Namespace + "." + c.Name
}

// NetworkToken is the client token of the cluster's network, from the reconcile-cluster key.
func NetworkToken(key string) string { return key + "-net" }

// LoadBalancerToken is the client token of the cluster's load balancer.
func LoadBalancerToken(key string) string { return key + "-lb" }

// NetworkName is the name of the cluster's network in simcloud.
func NetworkName(simCluster string) string { return simCluster + "-net" }

// LoadBalancerName is the name of the cluster's load balancer in simcloud.
func LoadBalancerName(simCluster string) string { return simCluster + "-lb" }
