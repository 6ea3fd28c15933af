// Command go-sim-infra is capw's infrastructure provider for simcloud written in Go with
// capw's Go SDK: the twin of plugins/sim-infra. The provider itself is package siminfra;
// this only exports it.
package main

import (
	"capw.dev/plugins/go-sim-infra/siminfra"
	"capw.dev/sdk/go/export"
)

func init() { export.Provider[siminfra.Config](siminfra.Provider{}) }

func main() {}
