package siminfra

import (
	_ "embed"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"capw.dev/sdk/go/capw"
)

// DefaultTokenSecret is the grant the token is read from when tokenSecret is left out.
const DefaultTokenSecret = "simcloud-token"

// DefaultRequestTimeoutMs is requestTimeoutMs when left out.
const DefaultRequestTimeoutMs = 5_000

// MaxRequestTimeoutMs is the largest requestTimeoutMs accepted: ten minutes, longer than any
// sane call deadline.
const MaxRequestTimeoutMs = 600_000

//go:embed config-schema.json
var configSchema string

// ControlPlaneEndpoint values: where the cluster's control plane is reached.
const (
	// EndpointLoadBalancer (the default): the control plane runs on the cluster's machines
	// behind a load balancer this provider creates.
	EndpointLoadBalancer = "loadBalancer"
	// EndpointNone: a service runs the control plane (the hosted and managed shapes); only the
	// network is made and the cluster is ready without an endpoint of this provider's.
	EndpointNone = "none"
)

// Config is the provider's config, e.g.
// {"endpoint": "http://127.0.0.1:8080", "zones": ["zone-a", "zone-b"]}. Only endpoint is
// required; config-schema.json says the types and defaults, [Config.Validate] the rest.
type Config struct {
	// Endpoint is simcloud's base URL. Its authority must be granted to the provider.
	Endpoint string `json:"endpoint"`
	// TokenSecret is the secret grant holding simcloud's bearer token.
	TokenSecret string `json:"tokenSecret"`
	// Zones to offer as failure domains, in simcloud's order; empty means all of simcloud's.
	Zones []string `json:"zones,omitempty"`
	// RequestTimeoutMs is the longest wait for one request, in milliseconds.
	RequestTimeoutMs uint32 `json:"requestTimeoutMs"`
	// InstanceType is the size of the machines (simcloud's default when ""). The schema marks
	// it as the one field that shapes a machine: changing it replaces a pool's machines.
	InstanceType string `json:"instanceType,omitempty"`
	// ControlPlaneEndpoint is [EndpointLoadBalancer] or [EndpointNone].
	ControlPlaneEndpoint string `json:"controlPlaneEndpoint,omitempty"`
}

// SetDefaults sets the defaults the schema states.
func (c *Config) SetDefaults() {
	c.TokenSecret = DefaultTokenSecret
	c.RequestTimeoutMs = DefaultRequestTimeoutMs
	c.ControlPlaneEndpoint = EndpointLoadBalancer
}

// BaseURL is the endpoint without a trailing slash, ready for /v1/... to be appended.
func (c Config) BaseURL() string { return strings.TrimRight(c.Endpoint, "/") }

// RequestTimeout is requestTimeoutMs as a duration.
func (c Config) RequestTimeout() time.Duration {
	return time.Duration(c.RequestTimeoutMs) * time.Millisecond
}

// Validate reports every rule violation, each at its field's JSON Pointer: endpoint an
// absolute http or https URL with a host and no user info, query, fragment or whitespace;
// tokenSecret not empty; every zone non-empty and named once; instanceType a plain name;
// controlPlaneEndpoint loadBalancer or none; requestTimeoutMs from 1 to [MaxRequestTimeoutMs].
func (c Config) Validate() []capw.FieldError {
	var errs []capw.FieldError
	if reason := checkEndpoint(c.Endpoint); reason != "" {
		errs = append(errs, capw.FieldError{Path: "/endpoint", Message: reason})
	}
	if strings.TrimSpace(c.TokenSecret) == "" {
		errs = append(errs, capw.FieldError{Path: "/tokenSecret", Message: "must name the secret grant that holds simcloud's token"})
	}
	for i, zone := range c.Zones {
		path := capw.JSONPointer("zones", strconv.Itoa(i))
		if strings.TrimSpace(zone) == "" {
			errs = append(errs, capw.FieldError{Path: path, Message: "must not be empty"})
		} else if slices.Contains(c.Zones[:i], zone) {
			errs = append(errs, capw.FieldError{Path: path, Message: fmt.Sprintf("zone `%s` is listed twice", zone)})
		}
	}
	if c.InstanceType != "" && !plainName(c.InstanceType) {
		errs = append(errs, capw.FieldError{
			Path:    "/instanceType",
			Message: fmt.Sprintf("must be a name of lower-case letters, digits and `-`, such as `small`; got `%s`", c.InstanceType),
		})
	}
	if c.ControlPlaneEndpoint != EndpointLoadBalancer && c.ControlPlaneEndpoint != EndpointNone {
		errs = append(errs, capw.FieldError{
			Path:    "/controlPlaneEndpoint",
			Message: fmt.Sprintf("must be `loadBalancer` or `none`; got `%s`", c.ControlPlaneEndpoint),
		})
	}
	if c.RequestTimeoutMs < 1 || c.RequestTimeoutMs > MaxRequestTimeoutMs {
		errs = append(errs, capw.FieldError{
			Path:    "/requestTimeoutMs",
			Message: fmt.Sprintf("must be between 1 and %d; got %d", MaxRequestTimeoutMs, c.RequestTimeoutMs),
		})
	}
	return errs
}

// plainName reports whether s holds only lower-case letters, digits and '-'.
func plainName(s string) bool {
	return !strings.ContainsFunc(s, func(r rune) bool {
		return (r < 'a' || r > 'z') && (r < '0' || r > '9') && r != '-'
	})
}

// checkEndpoint is why endpoint cannot serve as simcloud's base URL; "" when it can.
func checkEndpoint(endpoint string) string {
	scheme, rest, ok := strings.Cut(endpoint, "://")
	if !ok {
		return fmt.Sprintf("must be an absolute http:// or https:// URL, e.g. http://127.0.0.1:8080; got `%s`", endpoint)
	}
	if !strings.EqualFold(scheme, "http") && !strings.EqualFold(scheme, "https") {
		return fmt.Sprintf("scheme must be http or https; got `%s`", scheme)
	}
	if strings.ContainsFunc(endpoint, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
		return "must not contain whitespace or control characters"
	}
	if strings.ContainsAny(rest, "?#") {
		return "must not have a query or a fragment"
	}
	authority, _, _ := strings.Cut(rest, "/")
	if strings.Contains(authority, "@") {
		return "must not carry user info; the token comes from `tokenSecret`"
	}
	host := authority
	// [::1]:8080 splits at the port; a bare [::1] has its last colon inside brackets.
	if i := strings.LastIndex(authority, ":"); i >= 0 && !strings.Contains(authority[i+1:], "]") {
		host = authority[:i]
		if _, err := strconv.ParseUint(authority[i+1:], 10, 16); err != nil {
			return fmt.Sprintf("port `%s` is not a number from 0 to 65535", authority[i+1:])
		}
	}
	if host == "" {
		return "has no host"
	}
	return ""
}
