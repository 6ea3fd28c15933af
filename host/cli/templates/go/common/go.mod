module {{name}}

// go.bytecodealliance.org/pkg, which the SDK's bindings import, declares Go 1.27.
go 1.27.1

toolchain go1.27.3

require capw.dev/sdk/go v0.0.0

require go.bytecodealliance.org/pkg v0.4.0 // indirect

// capw.dev/sdk/go is not fetched: the Makefile builds and tests with a copy of this file in
// build/ that adds `replace capw.dev/sdk/go => $(SDK)` (and, for the component, points
// go.bytecodealliance.org/pkg at $(GO_PKG)). For an editor, add the same replace here.
