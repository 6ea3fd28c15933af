module capw.dev/plugins/go-sim-infra

go 1.27.1

toolchain go1.27.3

require capw.dev/sdk/go v0.0.0

require go.bytecodealliance.org/pkg v0.4.0 // indirect

replace capw.dev/sdk/go => ../../../sdk/go
