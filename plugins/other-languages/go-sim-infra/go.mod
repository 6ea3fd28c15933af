module capw.dev/plugins/go-sim-infra

go 1.27.1

toolchain go1.27.3

require capw.dev/sdk/go v0.0.0

require (
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.2 // indirect
	go.bytecodealliance.org/pkg v0.4.0 // indirect
	golang.org/x/text v0.14.0 // indirect
)

replace capw.dev/sdk/go => ../../../sdk/go
