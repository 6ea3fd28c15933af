// Package capw is the Go SDK for capw providers: WebAssembly components the capw host calls
// through the capw:provider@0.3.0 contract (the wit/0.3 folder of the capw repository).
//
// It turns the contract into ordinary Go: one interface per extension point
// ([Infrastructure], [Bootstrap], [ControlPlane], [LifecycleHooks]), a typed config parsed
// and checked against the provider's JSON Schema, the call [Context], [ProviderError] for
// failures the host understands, the host's log ([Log]), granted secrets ([Secret]) and
// outbound HTTP to granted hosts ([Request]).
//
// # Where to start
//
//  1. Declare a config struct with json tags, and its JSON Schema (draft 2020-12) as a
//     string, usually embedded from a file. The host checks every config against the schema
//     before any call; the SDK checks it again in validate-config and reports each problem
//     at its JSON Pointer. Give the struct a SetDefaults method ([Defaulter]) for the
//     fields a config may leave out, and a Validate method ([Validator]) for the rules a
//     schema cannot say.
//  2. Write a provider type with a Describe method ([Provider]): name, version,
//     description, the schema, the grants it asks for.
//  3. Implement the extension points it serves: the methods of [Infrastructure],
//     [Bootstrap], [ControlPlane] or [LifecycleHooks]. Embed [UnsupportedInfrastructure],
//     [UnsupportedBootstrap] or [UnsupportedControlPlane] to leave some of a point's
//     functions unsupported. A point whose interface the provider does not implement is not
//     declared, and its calls answer unsupported. Beside a point, [JoinTokens] (a bootstrap
//     provider whose join data carries a token the host keeps valid) and
//     [ManagedControlPlane] (a control plane a service runs) are optional: without them,
//     their functions answer as the contract's defaults do.
//  4. In package main, export it: export.Provider[Config](MyProvider{}) in an init
//     function (package capw.dev/sdk/go/export), and an empty main.
//  5. Build for GOOS=wasip1 GOARCH=wasm with -buildmode=c-shared, then make the module a
//     component with wasm-tools and the WASI preview1 reactor adapter (the SDK's README).
//
// # Outside a component
//
// A provider's unit tests run with plain go test: there is no host, so [Log] writes to
// stderr, [Secret] answers [ErrSecretNotGranted] and [Request.Send] fails, unless the test
// installs a fake host with package capw.dev/sdk/go/capwtest, which also builds contexts
// and checks configs the way validate-config does.
package capw
