package siminfra

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"capw.dev/sdk/go/capw"
)

// reconcile-cluster and delete-cluster: the cluster's network and load balancer.
//
// With controlPlaneEndpoint none (a control plane that a service runs) only the network is
// made: the cluster is ready once it exists, with no endpoint.
//
// simcloud allows one network and one load balancer per cluster. Each is looked up by cluster
// first and created only when absent, with a client token derived from the call's idempotency
// key, so a create whose answer was lost is answered, not repeated. A create that meets 409
// conflict (the cluster got one meanwhile, under another token) adopts the one that exists.

// LoadBalancerRequeue is when to look again at a load balancer that is not active yet.
const LoadBalancerRequeue = 2 * time.Second

// NetworkInUseRequeue is when to try again to delete a network that still holds instances.
const NetworkInUseRequeue = 5 * time.Second

// ReconcileCluster ensures the network and the load balancer exist; ready once the load
// balancer is active. With controlPlaneEndpoint none, it ensures the network only and is ready
// once it exists, without an endpoint.
func ReconcileCluster(c *Client, ctx *capw.Context[Config]) (capw.ClusterState, error) {
	cluster := SimCluster(ctx.Cluster())
	inCluster := Query("cluster", cluster)
	net, err := ensure(cluster, "network",
		func() (*network, error) {
			var list networkList
			if err := c.Get("/v1/networks"+inCluster, &list); err != nil || len(list.Networks) == 0 {
				return nil, err
			}
			return &list.Networks[0], nil
		},
		func() (*network, error) {
			var created network
			body := createNetwork{ClientToken: NetworkToken(ctx.IdempotencyKey()), Cluster: cluster, Name: NetworkName(cluster)}
			return &created, c.Post("/v1/networks", body, &created)
		})
	if err != nil {
		return capw.ClusterState{}, err
	}
	networkReady := capw.Condition{Type: "NetworkReady", Status: capw.ConditionTrue, Reason: "NetworkCreated",
		Message: "network " + net.ID}
	if ctx.Config.ControlPlaneEndpoint == EndpointNone {
		var zones zoneList
		if err := c.Get("/v1/zones", &zones); err != nil {
			return capw.ClusterState{}, err
		}
		domains, err := FailureDomains(zones.Zones, ctx.Config.Zones)
		if err != nil {
			return capw.ClusterState{}, err
		}
		return ReadyWithoutEndpoint(domains, networkReady), nil
	}
	lb, err := ensure(cluster, "load balancer",
		func() (*loadBalancer, error) {
			var list loadBalancerList
			if err := c.Get("/v1/load-balancers"+inCluster, &list); err != nil || len(list.LoadBalancers) == 0 {
				return nil, err
			}
			return &list.LoadBalancers[0], nil
		},
		func() (*loadBalancer, error) {
			var created loadBalancer
			body := createLoadBalancer{ClientToken: LoadBalancerToken(ctx.IdempotencyKey()), Cluster: cluster, Name: LoadBalancerName(cluster)}
			return &created, c.Post("/v1/load-balancers", body, &created)
		})
	if err != nil {
		return capw.ClusterState{}, err
	}
	if lb.State != lbActive {
		return capw.ClusterInProgress(waitingFor(*lb, networkReady)), nil
	}
	var zones zoneList
	if err := c.Get("/v1/zones", &zones); err != nil {
		return capw.ClusterState{}, err
	}
	domains, err := FailureDomains(zones.Zones, ctx.Config.Zones)
	if err != nil {
		return capw.ClusterState{}, err
	}
	return capw.ClusterReady(capw.ClusterInfrastructure{
		ControlPlaneEndpoint: &capw.Endpoint{Host: lb.Endpoint.Host, Port: lb.Endpoint.Port},
		FailureDomains:       domains,
		Conditions: []capw.Condition{networkReady, {
			Type: "LoadBalancerReady", Status: capw.ConditionTrue, Reason: "LoadBalancerActive",
			Message: fmt.Sprintf("load balancer %s at %s:%d", lb.ID, lb.Endpoint.Host, lb.Endpoint.Port),
		}},
	}), nil
}

// ReadyWithoutEndpoint is the answer once the network exists for a cluster whose control plane
// is not on machines (controlPlaneEndpoint none): ready, with no endpoint (the contract's none;
// the control-plane provider reports the service's) and the network's condition only.
func ReadyWithoutEndpoint(domains []capw.FailureDomain, networkReady capw.Condition) capw.ClusterState {
	return capw.ClusterReady(capw.ClusterInfrastructure{
		ControlPlaneEndpoint: nil,
		FailureDomains:       domains,
		Conditions:           []capw.Condition{networkReady},
	})
}

// DeleteCluster deletes the load balancer, then the network, then the bootstrap registration
// the cluster's first kubeadm init made in simcloud. Deleted once simcloud accepted every
// delete (it answers 204 for what is already gone); a network that still holds instances
// answers in-progress: the host calls delete-cluster only after deleting every machine, so
// they are on their way out.
func DeleteCluster(c *Client, ctx *capw.Context[Config]) (capw.Deletion, error) {
	cluster := SimCluster(ctx.Cluster())
	inCluster := Query("cluster", cluster)
	var lbs loadBalancerList
	if err := c.Get("/v1/load-balancers"+inCluster, &lbs); err != nil {
		return capw.Deletion{}, err
	}
	for _, lb := range lbs.LoadBalancers {
		if err := c.Delete("/v1/load-balancers/" + lb.ID); err != nil {
			return capw.Deletion{}, err
		}
		capw.Log.Info("load balancer deleted", "cluster", cluster, "loadBalancer", lb.ID)
	}
	var nets networkList
	if err := c.Get("/v1/networks"+inCluster, &nets); err != nil {
		return capw.Deletion{}, err
	}
	for _, n := range nets.Networks {
		err := c.Delete("/v1/networks/" + n.ID)
		switch {
		case err == nil:
			capw.Log.Info("network deleted", "cluster", cluster, "network", n.ID)
		case Is(err, 409, codeConflict):
			return capw.DeletionInProgress(capw.NewInProgress("WaitingForInstances",
				fmt.Sprintf("network %s is not empty yet: %s", n.ID, apiMessage(err))).After(NetworkInUseRequeue)), nil
		default:
			return capw.Deletion{}, err
		}
	}
	if err := c.Delete("/v1/clusters/" + cluster + "/bootstrap"); err != nil {
		return capw.Deletion{}, err
	}
	return capw.Deleted, nil
}

// VanishedError is a create refused because the cluster has its one kind already, and a
// lookup that then found none (it was deleted in between). Retryable: the next call creates
// it.
type VanishedError struct {
	Kind, Cluster string
	Err           error
}

func (e *VanishedError) Error() string {
	return fmt.Sprintf("simcloud refused a second %s for cluster `%s` but lists none", e.Kind, e.Cluster)
}
func (e *VanishedError) Unwrap() error { return e.Err }

// ProviderError is a retryable conflict: it resolves itself.
func (e *VanishedError) ProviderError() *capw.ProviderError {
	return capw.Retryable(capw.CodeConflict, "%s", e.Error())
}

// ensure is the one kind of cluster: found, else created, else (a create refused because
// the cluster has one already) found again.
func ensure[T any](cluster, kind string, find, create func() (*T, error)) (*T, error) {
	found, err := find()
	if err != nil || found != nil {
		return found, err
	}
	created, err := create()
	switch {
	case err == nil:
		capw.Log.Info(kind+" created", "cluster", cluster)
		return created, nil
	case Is(err, 409, codeConflict):
		found, findErr := find()
		if findErr != nil {
			return nil, findErr
		}
		if found == nil {
			return nil, &VanishedError{Kind: kind, Cluster: cluster, Err: err}
		}
		return found, nil
	}
	return nil, err
}

// waitingFor is the answer while lb is not active.
func waitingFor(lb loadBalancer, networkReady capw.Condition) capw.InProgress {
	message := fmt.Sprintf("load balancer %s is %s", lb.ID, lb.State)
	return capw.NewInProgress("WaitingForLoadBalancer", message).
		After(LoadBalancerRequeue).
		WithCondition(networkReady).
		WithCondition(capw.Condition{Type: "LoadBalancerReady", Status: capw.ConditionFalse,
			Reason: "LoadBalancerProvisioning", Message: message})
}

// UnknownZonesError is zones naming zones simcloud does not have; permanent until the config
// changes.
type UnknownZonesError struct {
	Missing, Available []string
}

func (e *UnknownZonesError) Error() string {
	return fmt.Sprintf("config `/zones`: simcloud has no zone %s; its zones are %s", quoted(e.Missing), quoted(e.Available))
}

// ProviderError is invalid input.
func (e *UnknownZonesError) ProviderError() *capw.ProviderError {
	return capw.Permanent(capw.CodeInvalidInput, "%s", e.Error())
}

func quoted(items []string) string {
	out := make([]string, 0, len(items))
	for _, i := range items {
		out = append(out, "`"+i+"`")
	}
	return strings.Join(out, ", ")
}

// FailureDomains is simcloud's available zones in its order, only those in wanted unless
// wanted is empty; control-plane machines may go in each. A wanted zone simcloud lacks is an
// [*UnknownZonesError].
func FailureDomains(available, wanted []string) ([]capw.FailureDomain, error) {
	var missing []string
	for _, z := range wanted {
		if !slices.Contains(available, z) {
			missing = append(missing, z)
		}
	}
	if len(missing) > 0 {
		return nil, &UnknownZonesError{Missing: missing, Available: available}
	}
	domains := []capw.FailureDomain{}
	for _, z := range available {
		if len(wanted) == 0 || slices.Contains(wanted, z) {
			domains = append(domains, capw.FailureDomain{Name: z, ControlPlane: true})
		}
	}
	return domains, nil
}

// apiMessage is simcloud's own message of an [*APIError].
func apiMessage(err error) string {
	var api *APIError
	if errors.As(err, &api) {
		return api.Detail.Message
	}
	return ""
}
