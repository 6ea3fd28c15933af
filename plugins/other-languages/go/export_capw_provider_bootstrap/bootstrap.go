// Package export_capw_provider_bootstrap implements the exported interface
// `capw:provider/bootstrap` of the example bootstrap provider in Go (see ../../README.md).
package export_capw_provider_bootstrap

import (
	"encoding/json"
	"fmt"
	"strings"

	witTypes "go.bytecodealliance.org/pkg/wit/types"
	"wit_component/capw_provider_bootstrap"
	"wit_component/capw_provider_types"
)

const token = "bootstrap-token"

type providerError = capw_provider_types.ProviderError

type config struct {
	Timezone *string  `json:"timezone"`
	Packages []string `json:"packages"`
}

func invalidInput(message string) providerError {
	return providerError{
		Code:         capw_provider_types.ErrorCode_InvalidInput,
		Message:      message,
		RetryAfterMs: witTypes.None[uint32](),
	}
}

// readConfig parses the call's config; an error when it is not a JSON object.
func readConfig(ctx capw_provider_types.CallContext) (config, *providerError) {
	var c config
	var probe map[string]json.RawMessage
	if json.Unmarshal([]byte(ctx.Config), &probe) != nil || probe == nil ||
		json.Unmarshal([]byte(ctx.Config), &c) != nil {
		err := invalidInput("config: must be a JSON object")
		return c, &err
	}
	return c, nil
}

// ClusterSecrets answers the cluster's bootstrap token.
func ClusterSecrets(ctx capw_provider_types.CallContext) witTypes.Result[capw_provider_bootstrap.SecretsState, providerError] {
	if _, err := readConfig(ctx); err != nil {
		return witTypes.Err[capw_provider_bootstrap.SecretsState](*err)
	}
	item := capw_provider_bootstrap.SecretItem{Name: token, Data: []byte("token:" + ctx.Cluster.Uid)}
	return witTypes.Ok[capw_provider_bootstrap.SecretsState, providerError](
		capw_provider_bootstrap.MakeSecretsStateReady([]capw_provider_bootstrap.SecretItem{item}))
}

var roles = map[capw_provider_types.MachineRole]string{
	capw_provider_types.MachineRole_Init:             "init",
	capw_provider_types.MachineRole_JoinControlPlane: "join-control-plane",
	capw_provider_types.MachineRole_Worker:           "worker",
}

// Generate answers the cloud-config of one machine.
func Generate(ctx capw_provider_types.CallContext, request capw_provider_bootstrap.BootstrapRequest) witTypes.Result[capw_provider_bootstrap.BootstrapData, providerError] {
	c, err := readConfig(ctx)
	if err != nil {
		return witTypes.Err[capw_provider_bootstrap.BootstrapData](*err)
	}
	hasToken := false
	for _, s := range request.Secrets {
		hasToken = hasToken || s.Name == token
	}
	if !hasToken {
		return witTypes.Err[capw_provider_bootstrap.BootstrapData](invalidInput("request.secrets: no bootstrap-token"))
	}
	members := make([]string, 0, len(request.ControlPlaneMembers))
	for _, m := range request.ControlPlaneMembers {
		members = append(members, m.Name)
	}
	tz := "UTC"
	if c.Timezone != nil {
		tz = *c.Timezone
	}
	var b strings.Builder
	b.WriteString("#cloud-config\n")
	fmt.Fprintf(&b, "# role: %s\n", roles[request.Role])
	v := request.Version
	fmt.Fprintf(&b, "# version: v%d.%d.%d\n", v.Major, v.Minor, v.Patch)
	fmt.Fprintf(&b, "# endpoint: %s:%d\n", request.Endpoint.Host, request.Endpoint.Port)
	fmt.Fprintf(&b, "# members: %s\n", strings.Join(members, ","))
	fmt.Fprintf(&b, "timezone: %s\n", tz)
	if len(c.Packages) == 0 {
		b.WriteString("packages: []\n")
	} else {
		b.WriteString("packages:\n")
		for _, p := range c.Packages {
			fmt.Fprintf(&b, "- %s\n", p)
		}
	}
	return witTypes.Ok[capw_provider_bootstrap.BootstrapData, providerError](capw_provider_bootstrap.BootstrapData{
		Format: capw_provider_bootstrap.BootstrapFormat_CloudConfig,
		Data:   []byte(b.String()),
	})
}

// Kubeconfig answers an admin kubeconfig for the cluster at endpoint.
func Kubeconfig(ctx capw_provider_types.CallContext, endpoint capw_provider_types.Endpoint, _ []capw_provider_bootstrap.SecretItem) witTypes.Result[string, providerError] {
	if _, err := readConfig(ctx); err != nil {
		return witTypes.Err[string](*err)
	}
	name := ctx.Cluster.Name
	host := endpoint.Host
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	user := name + "-admin"
	context := user + "@" + name
	lines := []string{
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
	}
	return witTypes.Ok[string, providerError](strings.Join(lines, "\n"))
}
