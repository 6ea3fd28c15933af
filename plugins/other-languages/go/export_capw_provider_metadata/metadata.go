// Package export_capw_provider_metadata implements the exported interface
// `capw:provider/metadata` of the example bootstrap provider in Go (see ../../README.md).
//
// `wit-bindgen go` writes the WIT types (package capw_provider_metadata) and the
// `//go:wasmexport` entry points that call Describe and ValidateConfig.
package export_capw_provider_metadata

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	witTypes "go.bytecodealliance.org/pkg/wit/types"
	"wit_component/capw_provider_metadata"
)

const (
	name         = "go-example"
	version      = "0.1.0"
	configSchema = `{"$schema":"https://json-schema.org/draft/2020-12/schema","title":"Config","type":"object","additionalProperties":false,"properties":{"timezone":{"description":"IANA time zone of the machines, e.g. Europe/Berlin.","type":"string","default":"UTC"},"packages":{"description":"Debian packages to install on every machine.","type":"array","items":{"type":"string"},"default":[]}}}`
)

var (
	timezone = regexp.MustCompile(`^[A-Za-z0-9_+/-]{1,64}$`)
	pkg      = regexp.MustCompile(`^[a-z0-9][a-z0-9+.-]*$`)
)

type fieldError = capw_provider_metadata.FieldError

// Describe says who the provider is.
func Describe() capw_provider_metadata.ProviderMetadata {
	return capw_provider_metadata.ProviderMetadata{
		Name:            name,
		Version:         version,
		Description:     "Example bootstrap provider in Go: cloud-config from a typed config.",
		ExtensionPoints: []capw_provider_metadata.ExtensionPoint{capw_provider_metadata.ExtensionPoint_Bootstrap},
		ConfigSchema:    configSchema,
		Capabilities: capw_provider_metadata.Capabilities{
			ControlPlaneShape: witTypes.None[capw_provider_metadata.ControlPlaneShape](),
		},
		RequestedGrants: capw_provider_metadata.RequestedGrants{HttpHosts: []string{}, Secrets: []string{}},
	}
}

// ValidateConfig reports every problem of a config, in document order, at its JSON Pointer.
func ValidateConfig(config string) witTypes.Result[witTypes.Unit, []fieldError] {
	if errors := problems(config); len(errors) > 0 {
		return witTypes.Err[witTypes.Unit](errors)
	}
	return witTypes.Ok[witTypes.Unit, []fieldError](witTypes.Unit{})
}

// pointer is a JSON Pointer (RFC 6901) to the given tokens.
func pointer(tokens ...string) string {
	var b strings.Builder
	escape := strings.NewReplacer("~", "~0", "/", "~1")
	for _, t := range tokens {
		b.WriteString("/" + escape.Replace(t))
	}
	return b.String()
}

// problems reads the config's members in document order (encoding/json's maps have none).
func problems(config string) []fieldError {
	dec := json.NewDecoder(strings.NewReader(config))
	notObject := []fieldError{{Path: "", Message: "must be a JSON object"}}
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil || dec.More() {
		return notObject
	}
	members := json.NewDecoder(strings.NewReader(string(raw)))
	if tok, err := members.Token(); err != nil || tok != json.Delim('{') {
		return notObject
	}
	errors := []fieldError{}
	for members.More() {
		tok, err := members.Token()
		if err != nil {
			return notObject
		}
		key, _ := tok.(string)
		var value any
		if err := members.Decode(&value); err != nil {
			return notObject
		}
		switch key {
		case "timezone":
			s, ok := value.(string)
			if !ok {
				errors = append(errors, fieldError{Path: "/timezone", Message: "must be a string"})
			} else if !timezone.MatchString(s) {
				errors = append(errors, fieldError{Path: "/timezone", Message: "must be a time zone name such as Europe/Berlin"})
			}
		case "packages":
			items, ok := value.([]any)
			if !ok {
				errors = append(errors, fieldError{Path: "/packages", Message: "must be an array of strings"})
				continue
			}
			for i, item := range items {
				path := pointer("packages", fmt.Sprint(i))
				s, ok := item.(string)
				if !ok {
					errors = append(errors, fieldError{Path: path, Message: "must be a string"})
				} else if !pkg.MatchString(s) {
					errors = append(errors, fieldError{Path: path, Message: "must be a Debian package name"})
				}
			}
		default:
			errors = append(errors, fieldError{Path: pointer(key), Message: "unknown field"})
		}
	}
	return errors
}
