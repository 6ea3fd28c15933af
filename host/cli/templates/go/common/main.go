//go:build wasip1

package main

// This file makes the program a capw provider component. It registers the provider with the
// SDK's export glue, whose bindings build only for GOOS=wasip1 GOARCH=wasm: `make` builds it,
// while `make test` (plain go test, native) leaves it out and tests provider.go alone.

import "capw.dev/sdk/go/export"

func init() { export.Provider[Config](Provider{}) }

// main is empty: the host calls the component's exports, never main.
func main() {}
