module capw.dev/sdk/go

// go.bytecodealliance.org/pkg, which the generated bindings import, declares Go 1.27.
go 1.27.1

toolchain go1.27.3

require go.bytecodealliance.org/pkg v0.4.0
