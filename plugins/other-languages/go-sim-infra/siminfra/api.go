package siminfra

// simcloud's JSON API, as simcloud serves it (sim/api in the capw repository). Requests carry
// exactly the fields simcloud accepts (it refuses unknown ones); responses ignore fields they
// do not name.

// simcloud's error codes this provider tells apart.
const (
	// codeConflict: a cluster's second network or load balancer, a network still in use, an
	// instance token of a deleted instance.
	codeConflict = "conflict"
	// codeIdempotencyMismatch: a client token already used with other parameters.
	codeIdempotencyMismatch = "idempotency_mismatch"
	// codeImmutableField: a change simcloud never allows.
	codeImmutableField = "immutable_field"
)

// Instance states.
const (
	statePending = "pending"
	stateBooting = "booting"
	stateRunning = "running"
	stateFailed  = "failed"
)

// Load balancer states.
const (
	lbProvisioning = "provisioning"
	lbActive       = "active"
)

// Instance roles.
const (
	roleControlPlane = "control-plane"
	roleWorker       = "worker"
)

type apiAddress struct {
	Kind    string `json:"type"`
	Address string `json:"address"`
}

type createInstance struct {
	ClientToken   string            `json:"client_token"`
	Name          string            `json:"name"`
	Cluster       string            `json:"cluster"`
	Role          string            `json:"role"`
	Zone          string            `json:"zone,omitempty"`
	InstanceType  string            `json:"instance_type,omitempty"`
	Tags          map[string]string `json:"tags"`
	BootstrapData string            `json:"bootstrap_data"`
}

type instance struct {
	ID           string            `json:"id"`
	ProviderID   string            `json:"provider_id"`
	ClientToken  string            `json:"client_token"`
	Name         string            `json:"name"`
	Cluster      string            `json:"cluster"`
	Role         string            `json:"role"`
	Zone         string            `json:"zone"`
	InstanceType string            `json:"instance_type"`
	NetworkID    string            `json:"network_id"`
	Addresses    []apiAddress      `json:"addresses"`
	State        string            `json:"state"`
	Reason       string            `json:"reason"`
	Tags         map[string]string `json:"tags"`
}

type instanceList struct {
	Instances []instance `json:"instances"`
}

type createNetwork struct {
	ClientToken string `json:"client_token,omitempty"`
	Cluster     string `json:"cluster"`
	Name        string `json:"name"`
}

type network struct {
	ID      string `json:"id"`
	Cluster string `json:"cluster"`
	Name    string `json:"name"`
}

type networkList struct {
	Networks []network `json:"networks"`
}

type createLoadBalancer struct {
	ClientToken string `json:"client_token,omitempty"`
	Cluster     string `json:"cluster"`
	Name        string `json:"name"`
}

type apiEndpoint struct {
	Host string `json:"host"`
	Port uint16 `json:"port"`
}

type loadBalancer struct {
	ID       string      `json:"id"`
	Cluster  string      `json:"cluster"`
	Name     string      `json:"name"`
	Endpoint apiEndpoint `json:"endpoint"`
	State    string      `json:"state"`
}

type loadBalancerList struct {
	LoadBalancers []loadBalancer `json:"load_balancers"`
}

type zoneList struct {
	Zones []string `json:"zones"`
}

type errorBody struct {
	Error errorDetail `json:"error"`
}

type errorDetail struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Field   string `json:"field,omitempty"`
}
