package capw

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// FieldError is a problem with one field of a config.
type FieldError struct {
	// Path is the field's JSON Pointer (RFC 6901), e.g. /zones/2; "" for the whole document.
	Path    string
	Message string
}

// Validator is a config type with rules its schema cannot say: a value's format, uniqueness
// across a list, combinations of fields. validate-config calls Validate on a config that
// passed the schema and parsed.
//
// Validate must be pure and deterministic, and report every problem, each at its field's
// JSON Pointer ([JSONPointer]), not just the first. No problem is an empty (or nil) list.
type Validator interface {
	Validate() []FieldError
}

// Defaulter is a config type with defaults for the fields a config may leave out: SetDefaults
// runs on the zero value before the JSON is decoded over it, so a field the JSON names keeps
// the JSON's value. Say the same defaults in the schema's "default" keywords.
type Defaulter interface {
	SetDefaults()
}

// JSONPointer is the JSON Pointer of the unescaped tokens, e.g. ("zones", "2") -> /zones/2;
// "~" and "/" inside a token are written ~0 and ~1.
func JSONPointer(tokens ...string) string {
	var b strings.Builder
	escape := strings.NewReplacer("~", "~0", "/", "~1")
	for _, t := range tokens {
		b.WriteByte('/')
		b.WriteString(escape.Replace(t))
	}
	return b.String()
}

// ConfigError is a config that does not parse into the provider's config type.
type ConfigError struct {
	// Pointer is the JSON Pointer of the field at fault; "" for the document.
	Pointer string
	// Message says what is wrong.
	Message string
}

// Error reads `config at "/a/b": message`, or `config: message` for the document.
func (e *ConfigError) Error() string {
	if e.Pointer == "" {
		return "config: " + e.Message
	}
	return fmt.Sprintf("config at %q: %s", e.Pointer, e.Message)
}

// ProviderError is invalid input: the same config fails again.
func (e *ConfigError) ProviderError() *ProviderError {
	return Permanent(CodeInvalidInput, "%s", e.Error())
}

// ParseConfig decodes the JSON config into C, as every call does: defaults first
// ([Defaulter]), then the JSON over them; a field C does not have is refused, and so is
// anything after the document.
//
// It does not check the schema: the host did before the call (and [CheckConfig] does in
// validate-config).
func ParseConfig[C any](config string) (C, error) {
	var c C
	if d, ok := any(&c).(Defaulter); ok {
		d.SetDefaults()
	}
	dec := json.NewDecoder(strings.NewReader(config))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return c, decodeError(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return c, &ConfigError{Message: "must be one JSON document"}
	}
	return c, nil
}

// decodeError is what encoding/json said, at the pointer of the field it names.
func decodeError(err error) *ConfigError {
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) {
		var tokens []string
		if typeErr.Field != "" {
			tokens = strings.Split(typeErr.Field, ".")
		}
		return &ConfigError{
			Pointer: JSONPointer(tokens...),
			Message: fmt.Sprintf("must be %s, not %s", article(typeErr.Type.Kind().String()), typeErr.Value),
		}
	}
	message := strings.TrimPrefix(err.Error(), "json: ")
	// "unknown field \"x\"" names a field of the document or of a nested object; encoding/json
	// does not say which, so the pointer stays at the document.
	return &ConfigError{Message: message}
}

func article(kind string) string {
	switch kind {
	case "struct", "map":
		return "an object"
	case "slice", "array":
		return "an array"
	case "string":
		return "a string"
	case "bool":
		return "a boolean"
	}
	return "a number (" + kind + ")"
}

// Schema is a provider's config schema, compiled (JSON Schema draft 2020-12, as the host
// compiles it).
type Schema struct {
	compiled *jsonschema.Schema
}

// schemaURL names the schema inside the compiler; nothing is ever fetched from it.
const schemaURL = "urn:capw:provider-config-schema"

// CompileSchema compiles a config schema, a JSON document.
func CompileSchema(schema string) (*Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(schema))
	if err != nil {
		return nil, fmt.Errorf("the config schema is not JSON: %w", err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource(schemaURL, doc); err != nil {
		return nil, fmt.Errorf("the config schema: %w", err)
	}
	compiled, err := c.Compile(schemaURL)
	if err != nil {
		return nil, fmt.Errorf("the config schema does not compile: %w", err)
	}
	return &Schema{compiled: compiled}, nil
}

// printer words the schema's findings.
var printer = message.NewPrinter(language.English)

// Check is every place where the JSON config breaks the schema, each at the JSON Pointer of
// the value at fault. A property the schema does not allow is reported at its own pointer, as
// "unknown field"; a missing one at the object that lacks it.
func (s *Schema) Check(config string) []FieldError {
	instance, err := jsonschema.UnmarshalJSON(strings.NewReader(config))
	if err != nil {
		return []FieldError{{Path: "", Message: "must be a JSON document: " + err.Error()}}
	}
	err = s.compiled.Validate(instance)
	if err == nil {
		return nil
	}
	var invalid *jsonschema.ValidationError
	if !errors.As(err, &invalid) {
		return []FieldError{{Path: "", Message: err.Error()}}
	}
	var out []FieldError
	collect(invalid, &out)
	return out
}

// collect adds the leaves of a validation error's tree: the findings that say what is wrong,
// not the keywords (allOf, $ref) that led to them.
func collect(e *jsonschema.ValidationError, out *[]FieldError) {
	if len(e.Causes) > 0 {
		for _, cause := range e.Causes {
			collect(cause, out)
		}
		return
	}
	if extra, ok := e.ErrorKind.(*kind.AdditionalProperties); ok {
		for _, name := range extra.Properties {
			path := JSONPointer(append(append([]string(nil), e.InstanceLocation...), name)...)
			*out = append(*out, FieldError{Path: path, Message: "unknown field"})
		}
		return
	}
	*out = append(*out, FieldError{
		Path:    JSONPointer(e.InstanceLocation...),
		Message: e.ErrorKind.LocalizedString(printer),
	})
}

// CheckConfig is what validate-config answers for the JSON config of a provider whose config
// type is C and whose schema is schema: every problem the schema finds; else the config's
// parse error; else every problem its [Validator] finds. An empty list accepts the config.
//
// # Guarantees
//
// A refusal is never an empty list, and every path is a JSON Pointer. A schema that does not
// compile refuses every config at "", saying so.
func CheckConfig[C any](schema, config string) []FieldError {
	compiled, err := CompileSchema(schema)
	if err != nil {
		return []FieldError{{Path: "", Message: err.Error()}}
	}
	if problems := compiled.Check(config); len(problems) > 0 {
		return problems
	}
	parsed, err := ParseConfig[C](config)
	if err != nil {
		var ce *ConfigError
		if errors.As(err, &ce) {
			return []FieldError{{Path: ce.Pointer, Message: ce.Message}}
		}
		return []FieldError{{Path: "", Message: err.Error()}}
	}
	if v, ok := any(parsed).(Validator); ok {
		return v.Validate()
	}
	if v, ok := any(&parsed).(Validator); ok {
		return v.Validate()
	}
	return nil
}
