// Package export makes a Go program a capw provider component: it registers the provider
// whose functions the contract's exports call, and links the host's capabilities (log,
// secrets, wasi:http) in place of the native stand-ins.
//
// The provider's package main needs nothing else:
//
//	package main
//
//	import (
//		"capw.dev/sdk/go/export"
//		"example.com/my-provider/provider"
//	)
//
//	func init() { export.Provider[provider.Config](provider.Provider{}) }
//
//	func main() {}
//
// It builds only for GOOS=wasip1 GOARCH=wasm (with -buildmode=c-shared); unit tests import the
// provider's own package, never this one.
package export

import (
	"capw.dev/sdk/go/capw"
	"capw.dev/sdk/go/internal/dispatch"
	_ "capw.dev/sdk/go/internal/wasihost"
	_ "capw.dev/sdk/go/internal/wit/exports/wit_exports"
)

// Provider exports p, with config type C, as the component's implementation of the
// contract's provider world. Call it once, from an init function of package main.
//
// The extension points p implements ([capw.Infrastructure], [capw.Bootstrap],
// [capw.ControlPlane], [capw.LifecycleHooks]) are declared in metadata.describe; the others
// answer unsupported.
func Provider[C any](p capw.Provider[C]) {
	dispatch.Current = dispatch.Build[C](p)
}
