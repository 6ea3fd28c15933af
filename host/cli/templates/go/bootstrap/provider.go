// Command {{name}} is a bootstrap provider written with capw's Go SDK: cloud-config for each
// machine from a typed config.
//
// provider.go is the provider; main.go exports it from the component.
package main

import (
	_ "embed"
	"fmt"
	"strconv"
	"strings"

	"capw.dev/sdk/go/capw"
)

// Config is the provider's config, as a ClusterClass gives it.
type Config struct {
	// Timezone is the IANA time zone of the machines, e.g. Europe/Berlin.
	Timezone string `json:"timezone"`
	// Packages are the Debian packages to install on every machine.
	Packages []string `json:"packages"`
}

// configSchema is Config's JSON Schema, with the same defaults as SetDefaults. The host checks
// every config against it before any call.
//
//go:embed config-schema.json
var configSchema string

// SetDefaults sets the fields a config leaves out, before the config is read over them.
func (c *Config) SetDefaults() {
	c.Timezone = "UTC"
}

// Validate is what the schema cannot say; validate-config reports each problem at its field's
// JSON Pointer.
func (c Config) Validate() []capw.FieldError {
	var errors []capw.FieldError
	tz := c.Timezone
	if len(tz) < 1 || len(tz) > 64 || !all(tz, func(r rune) bool {
		return lowerOrDigit(r) || 'A' <= r && r <= 'Z' || strings.ContainsRune("_+-/", r)
	}) {
		errors = append(errors, capw.FieldError{
			Path:    "/timezone",
			Message: "must be a time zone name such as Europe/Berlin",
		})
	}
	for i, pkg := range c.Packages {
		if pkg == "" || !lowerOrDigit(rune(pkg[0])) || !all(pkg, func(r rune) bool {
			return lowerOrDigit(r) || strings.ContainsRune("+.-", r)
		}) {
			errors = append(errors, capw.FieldError{
				Path:    capw.JSONPointer("packages", strconv.Itoa(i)),
				Message: "must be a Debian package name",
			})
		}
	}
	return errors
}

// all reports whether every character of s is ok.
func all(s string, ok func(rune) bool) bool {
	return !strings.ContainsFunc(s, func(r rune) bool { return !ok(r) })
}

func lowerOrDigit(r rune) bool { return 'a' <= r && r <= 'z' || '0' <= r && r <= '9' }

// token is the name of the one secret item ClusterSecrets makes.
const token = "bootstrap-token"

// Provider is the provider. Stateless: the host calls each function in a fresh instance.
type Provider struct{}

// Describe says who the provider is. It implements capw.Bootstrap, so that is the one
// extension point it declares; the others answer unsupported.
func (Provider) Describe() capw.Description {
	return capw.Description{
		Name:         "{{name}}",
		Version:      "0.1.0",
		Description:  "Bootstrap provider: cloud-config from a typed config.",
		ConfigSchema: configSchema,
	}
}

// ClusterSecrets makes the cluster's secret material: here one token, from the cluster's UID.
func (Provider) ClusterSecrets(ctx *capw.Context[Config]) (capw.SecretsState, error) {
	return capw.SecretsReady(capw.SecretItem{
		Name: token,
		Data: []byte("token:" + ctx.Cluster().UID),
	}), nil
}

// Generate is a machine's cloud-config. A worker of a control plane a service runs (the
// hosted and managed shapes) joins with request.Join, the service's CA and token, and the
// cluster has no secrets of this provider's.
func (Provider) Generate(ctx *capw.Context[Config], request capw.BootstrapRequest) (capw.BootstrapData, error) {
	if request.Join == nil && !hasSecret(request.Secrets, token) {
		return capw.BootstrapData{}, capw.Permanent(capw.CodeInvalidInput, "request.secrets: no bootstrap-token")
	}
	members := make([]string, 0, len(request.ControlPlaneMembers))
	for _, m := range request.ControlPlaneMembers {
		members = append(members, m.Name)
	}
	var data strings.Builder
	fmt.Fprintf(&data, "#cloud-config\n# role: %s\n# version: %s\n# endpoint: %s:%d\n# members: %s\ntimezone: %s\n",
		request.Role, request.Version, request.Endpoint.Host, request.Endpoint.Port,
		strings.Join(members, ","), ctx.Config.Timezone)
	if join := request.Join; join != nil && join.Token != nil {
		// The token's id is public; its secret would go into the join configuration.
		fmt.Fprintf(&data, "# join token: %s\n", join.Token.ID)
	}
	if len(ctx.Config.Packages) == 0 {
		data.WriteString("packages: []\n")
	} else {
		data.WriteString("packages:\n")
		for _, pkg := range ctx.Config.Packages {
			data.WriteString("- " + pkg + "\n")
		}
	}
	return capw.BootstrapData{Format: capw.FormatCloudConfig, Data: []byte(data.String())}, nil
}

// Kubeconfig is an admin kubeconfig for the cluster reached at endpoint.
func (Provider) Kubeconfig(ctx *capw.Context[Config], endpoint capw.Endpoint, _ []capw.SecretItem) (string, error) {
	name := ctx.Cluster().Name
	host := endpoint.Host
	if strings.Contains(host, ":") {
		host = "[" + host + "]" // an IPv6 address
	}
	user := name + "-admin"
	context := user + "@" + name
	return strings.Join([]string{
		"apiVersion: v1",
		"kind: Config",
		"clusters:",
		"- name: " + name,
		"  cluster:",
		fmt.Sprintf("    server: https://%s:%d", host, endpoint.Port),
		"users:",
		"- name: " + user,
		"  user: {}",
		"contexts:",
		"- name: " + context,
		"  context:",
		"    cluster: " + name,
		"    user: " + user,
		"current-context: " + context,
		"",
	}, "\n"), nil
}

func hasSecret(items []capw.SecretItem, name string) bool {
	for _, item := range items {
		if item.Name == name {
			return true
		}
	}
	return false
}

// Its token item is not a join token the host keeps valid in the workload cluster, so
// Provider leaves capw.JoinTokens out: current-join-token answers none. A provider whose join
// data carries a bootstrap token implements CurrentJoinToken and RenewJoinToken too.

// The compiler checks that Provider serves the bootstrap point, all of it.
var _ capw.Bootstrap[Config] = Provider{}
