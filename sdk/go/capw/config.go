package capw

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
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

// Schema is a provider's config schema, compiled: a subset of JSON Schema draft 2020-12 that
// the SDK checks itself.
//
// # The subset
//
// The host checks a config against the full schema (draft 2020-12) before it calls the
// provider; validate-config checks it again inside the component. A complete validator costs
// every call of a component its initialisation, so the SDK checks this subset, as the Python
// and JavaScript SDKs do, and [CompileSchema] refuses a schema with any other keyword, naming
// it and where it is, so that a schema never says more than the SDK enforces:
//
//   - checked: type (a name or a list of names; "integer" takes 2.0, as JSON does), enum,
//     const, minimum, maximum, exclusiveMinimum, exclusiveMaximum, multipleOf, minLength,
//     maxLength (in code points), pattern, items (one schema for every item), minItems,
//     maxItems, uniqueItems, properties, required, additionalProperties (false or a schema),
//     minProperties, maxProperties, $ref to "#" or "#/$defs/NAME";
//   - read and not checked: $schema, $id, $comment, $defs, title, description, examples,
//     default (say the same defaults in [Defaulter]), deprecated, readOnly, writeOnly,
//     format, and capw's own x-capw-shapes-machine;
//   - refused: everything else (oneOf, anyOf, allOf, not, if/then/else, prefixItems,
//     patternProperties, dependentRequired, a $ref to another document, ...): write the rule
//     in [Validator.Validate].
//
// true and false are schemas too (anything, nothing). Numbers are compared as float64.
//
// A pattern is a Go regular expression (package regexp, RE2 syntax), searched for anywhere in
// the string, where the host's is ECMA-262: write patterns in the syntax both share. RE2 has
// no lookaround and no backreferences, and no \uXXXX escape (write \x{XXXX}), so such a
// pattern is refused; "." matches \r, \u2028 and \u2029 and \s only [\t\n\f\r ],
// where ECMA-262 differs. The host checks the exact schema first, so a config the two read
// differently is refused there.
type Schema struct {
	root *schemaNode
}

// schemaNode is one schema of the subset, compiled.
type schemaNode struct {
	// nothing is the schema false: no value is allowed.
	nothing bool
	// ref is where $ref points ("" for none); target is the schema it names.
	ref    string
	target *schemaNode

	types    []string
	enum     []any
	hasEnum  bool
	constant any
	hasConst bool

	minimum, maximum, exclusiveMinimum, exclusiveMaximum, multipleOf *float64

	minLength, maxLength, minItems, maxItems, minProperties, maxProperties *int

	pattern     *regexp.Regexp
	patternText string

	items       *schemaNode
	uniqueItems bool

	properties map[string]*schemaNode
	required   []string
	additional *schemaNode

	defs map[string]*schemaNode
}

// schemaAnnotations are the keywords the SDK reads past.
var schemaAnnotations = map[string]bool{
	"$schema": true, "$id": true, "$comment": true, "title": true, "description": true,
	"examples": true, "default": true, "deprecated": true, "readOnly": true, "writeOnly": true,
	"format": true,
	// capw's own: a property that does not shape a machine (contract.md, config-schema).
	"x-capw-shapes-machine": true,
}

// schemaTypes are the type names of JSON Schema, with how a message names them.
var schemaTypes = map[string]string{
	"null": "null", "boolean": "a boolean", "object": "an object", "array": "an array",
	"number": "a number", "integer": "an integer", "string": "a string",
}

// schemaCompiler compiles one schema document.
type schemaCompiler struct {
	// refs are the nodes with a $ref, with where the $ref is, for resolving once all is compiled.
	refs []schemaRef
}

type schemaRef struct {
	node  *schemaNode
	where string
}

// CompileSchema compiles a config schema, a JSON document, within the SDK's subset of JSON
// Schema ([Schema]). A keyword outside the subset, a keyword's value of the wrong kind, a
// pattern Go cannot compile and a $ref that names nothing are errors, each naming where it is
// in the schema, e.g. "#/properties/a/oneOf: `oneOf` is not checked by the SDK; write the
// rule in Validate".
func CompileSchema(schema string) (*Schema, error) {
	doc, err := decodeJSON(schema)
	if err != nil {
		return nil, fmt.Errorf("the config schema is not JSON: %w", err)
	}
	c := &schemaCompiler{}
	root, err := c.compile(doc, "#")
	if err != nil {
		return nil, fmt.Errorf("the config schema: %w", err)
	}
	for _, r := range c.refs {
		target, err := resolveRef(root, r.node.ref)
		if err != nil {
			return nil, fmt.Errorf("the config schema: %s: %w", r.where, err)
		}
		r.node.target = target
	}
	// A chain of $refs that comes back to where it started never reaches a value to check.
	for _, r := range c.refs {
		seen := map[*schemaNode]bool{}
		for n := r.node; n != nil; n = n.target {
			if seen[n] {
				return nil, fmt.Errorf("the config schema: %s: the `$ref` %q leads back to itself", r.where, r.node.ref)
			}
			seen[n] = true
		}
	}
	return &Schema{root: root}, nil
}

// resolveRef is the schema ref names: "#", the whole schema, or "#/$defs/NAME".
func resolveRef(root *schemaNode, ref string) (*schemaNode, error) {
	if ref == "#" {
		return root, nil
	}
	const prefix = "#/$defs/"
	name, ok := strings.CutPrefix(ref, prefix)
	if !ok || strings.Contains(name, "/") {
		return nil, fmt.Errorf("`$ref` %q is not checked by the SDK: only \"#\" and \"#/$defs/NAME\" are", ref)
	}
	name = strings.NewReplacer("~1", "/", "~0", "~").Replace(name)
	if target, ok := root.defs[name]; ok {
		return target, nil
	}
	return nil, fmt.Errorf("`$ref` %q names no schema of the root's `$defs`", ref)
}

// compile is the schema v, at where (a JSON Pointer into the schema, as a URI fragment).
func (c *schemaCompiler) compile(v any, at string) (*schemaNode, error) {
	n := &schemaNode{}
	switch v := v.(type) {
	case bool:
		n.nothing = !v
		return n, nil
	case *jsonObject:
		for _, keyword := range v.names {
			if err := c.keyword(n, keyword, v.values[keyword], at); err != nil {
				return nil, err
			}
		}
		return n, nil
	}
	return nil, fmt.Errorf("%s: a schema must be an object or a boolean, not %s", at, kindOf(v))
}

// keyword compiles one keyword of the schema at at into n.
func (c *schemaCompiler) keyword(n *schemaNode, keyword string, value any, at string) error {
	where := at + JSONPointer(keyword)
	fail := func(format string, args ...any) error {
		return fmt.Errorf("%s: %s", where, fmt.Sprintf(format, args...))
	}
	if schemaAnnotations[keyword] {
		return nil
	}
	switch keyword {
	case "type":
		names, ok := value.([]any)
		if !ok {
			names = []any{value}
		}
		if len(names) == 0 {
			return fail("`type` must name at least one type")
		}
		for _, name := range names {
			s, ok := name.(string)
			if _, known := schemaTypes[s]; !ok || !known {
				return fail("`type` must name types of JSON Schema (null, boolean, object, array, number, integer, string), not %s", jsonText(name))
			}
			n.types = append(n.types, s)
		}
	case "enum":
		list, ok := value.([]any)
		if !ok {
			return fail("`enum` must be an array of values")
		}
		n.enum, n.hasEnum = list, true
	case "const":
		n.constant, n.hasConst = value, true
	case "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf":
		f, ok := value.(float64)
		if !ok {
			return fail("`%s` must be a number", keyword)
		}
		if keyword == "multipleOf" && !(f > 0) {
			return fail("`multipleOf` must be a number above 0")
		}
		*n.number(keyword) = &f
	case "minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties":
		f, ok := value.(float64)
		if !ok || f < 0 || f != math.Trunc(f) || f > math.MaxInt32 {
			return fail("`%s` must be a whole number, 0 or more", keyword)
		}
		count := int(f)
		*n.count(keyword) = &count
	case "pattern":
		s, ok := value.(string)
		if !ok {
			return fail("`pattern` must be a string")
		}
		re, err := regexp.Compile(s)
		if err != nil {
			return fail("`pattern` is not a regular expression Go's regexp (RE2) reads: %v", err)
		}
		n.pattern, n.patternText = re, s
	case "items":
		if _, ok := value.([]any); ok {
			return fail("`items` must be one schema (a list of schemas is `prefixItems`, which the SDK does not check)")
		}
		items, err := c.compile(value, where)
		if err != nil {
			return err
		}
		n.items = items
	case "uniqueItems":
		b, ok := value.(bool)
		if !ok {
			return fail("`uniqueItems` must be a boolean")
		}
		n.uniqueItems = b
	case "properties", "$defs":
		members, ok := value.(*jsonObject)
		if !ok {
			return fail("`%s` must be an object of schemas", keyword)
		}
		schemas := make(map[string]*schemaNode, len(members.names))
		for _, name := range members.names {
			s, err := c.compile(members.values[name], where+JSONPointer(name))
			if err != nil {
				return err
			}
			schemas[name] = s
		}
		if keyword == "properties" {
			n.properties = schemas
		} else {
			n.defs = schemas
		}
	case "required":
		list, ok := value.([]any)
		if !ok {
			return fail("`required` must be an array of names")
		}
		for _, name := range list {
			s, ok := name.(string)
			if !ok {
				return fail("`required` must be an array of names, not hold %s", kindOf(name))
			}
			n.required = append(n.required, s)
		}
	case "additionalProperties":
		extra, err := c.compile(value, where)
		if err != nil {
			return err
		}
		n.additional = extra
	case "$ref":
		ref, ok := value.(string)
		if !ok {
			return fail("`$ref` must be a string")
		}
		n.ref = ref
		c.refs = append(c.refs, schemaRef{node: n, where: where})
	default:
		return fail("`%s` is not checked by the SDK; write the rule in Validate", keyword)
	}
	return nil
}

// number is the field of the numeric keyword.
func (n *schemaNode) number(keyword string) **float64 {
	switch keyword {
	case "minimum":
		return &n.minimum
	case "maximum":
		return &n.maximum
	case "exclusiveMinimum":
		return &n.exclusiveMinimum
	case "exclusiveMaximum":
		return &n.exclusiveMaximum
	}
	return &n.multipleOf
}

// count is the field of the counting keyword.
func (n *schemaNode) count(keyword string) **int {
	switch keyword {
	case "minLength":
		return &n.minLength
	case "maxLength":
		return &n.maxLength
	case "minItems":
		return &n.minItems
	case "maxItems":
		return &n.maxItems
	case "minProperties":
		return &n.minProperties
	}
	return &n.maxProperties
}

// Check is every place where the JSON config breaks the schema, in document order, each at
// the JSON Pointer of the value at fault. A property the schema does not allow is reported at
// its own pointer, as "unknown field"; a missing one at the object that lacks it.
func (s *Schema) Check(config string) []FieldError {
	instance, err := decodeJSON(config)
	if err != nil {
		return []FieldError{{Path: "", Message: "must be a JSON document: " + err.Error()}}
	}
	var out []FieldError
	s.root.check(instance, "", &out)
	return out
}

// check adds to out every problem n finds in v, which is at the JSON Pointer at.
func (n *schemaNode) check(v any, at string, out *[]FieldError) {
	add := func(at, format string, args ...any) {
		*out = append(*out, FieldError{Path: at, Message: fmt.Sprintf(format, args...)})
	}
	if n.nothing {
		add(at, "no value is allowed here")
		return
	}
	if n.target != nil {
		n.target.check(v, at, out)
	}
	if len(n.types) > 0 && !slices.ContainsFunc(n.types, func(t string) bool { return hasType(v, t) }) {
		names := make([]string, len(n.types))
		for i, t := range n.types {
			names[i] = schemaTypes[t]
		}
		add(at, "must be %s, not %s", strings.Join(names, " or "), kindOf(v))
		return
	}
	if n.hasConst && !jsonEqual(v, n.constant) {
		add(at, "must be %s", jsonText(n.constant))
	}
	if n.hasEnum && !slices.ContainsFunc(n.enum, func(e any) bool { return jsonEqual(v, e) }) {
		options := make([]string, len(n.enum))
		for i, e := range n.enum {
			options[i] = jsonText(e)
		}
		add(at, "must be one of %s", strings.Join(options, ", "))
	}
	switch v := v.(type) {
	case float64:
		if n.minimum != nil && v < *n.minimum {
			add(at, "must be at least %s; got %s", showNumber(*n.minimum), showNumber(v))
		}
		if n.maximum != nil && v > *n.maximum {
			add(at, "must be at most %s; got %s", showNumber(*n.maximum), showNumber(v))
		}
		if n.exclusiveMinimum != nil && v <= *n.exclusiveMinimum {
			add(at, "must be above %s; got %s", showNumber(*n.exclusiveMinimum), showNumber(v))
		}
		if n.exclusiveMaximum != nil && v >= *n.exclusiveMaximum {
			add(at, "must be below %s; got %s", showNumber(*n.exclusiveMaximum), showNumber(v))
		}
		if n.multipleOf != nil && !isMultiple(v, *n.multipleOf) {
			add(at, "must be a multiple of %s; got %s", showNumber(*n.multipleOf), showNumber(v))
		}
	case string:
		length := utf8.RuneCountInString(v)
		if n.minLength != nil && length < *n.minLength {
			add(at, "must be at least %s long", counted(*n.minLength, "character"))
		}
		if n.maxLength != nil && length > *n.maxLength {
			add(at, "must be at most %s long", counted(*n.maxLength, "character"))
		}
		if n.pattern != nil && !n.pattern.MatchString(v) {
			add(at, "must match %s", n.patternText)
		}
	case []any:
		if n.minItems != nil && len(v) < *n.minItems {
			add(at, "must have at least %s", counted(*n.minItems, "item"))
		}
		if n.maxItems != nil && len(v) > *n.maxItems {
			add(at, "must have at most %s", counted(*n.maxItems, "item"))
		}
		for i, item := range v {
			where := at + JSONPointer(strconv.Itoa(i))
			if n.items != nil {
				n.items.check(item, where, out)
			}
			if n.uniqueItems && slices.ContainsFunc(v[:i], func(e any) bool { return jsonEqual(item, e) }) {
				add(where, "is listed twice")
			}
		}
	case *jsonObject:
		if n.minProperties != nil && len(v.names) < *n.minProperties {
			add(at, "must have at least %s", counted(*n.minProperties, "field"))
		}
		if n.maxProperties != nil && len(v.names) > *n.maxProperties {
			add(at, "must have at most %s", counted(*n.maxProperties, "field"))
		}
		for _, name := range n.required {
			if _, ok := v.values[name]; !ok {
				add(at, "missing required field `%s`", name)
			}
		}
		for _, name := range v.names {
			where := at + JSONPointer(name)
			if property, ok := n.properties[name]; ok {
				property.check(v.values[name], where, out)
			} else if n.additional != nil && n.additional.nothing {
				add(where, "unknown field")
			} else if n.additional != nil {
				n.additional.check(v.values[name], where, out)
			}
		}
	}
}

// isMultiple says whether v is a multiple of step (above 0): exactly for whole numbers, else
// within rounding.
func isMultiple(v, step float64) bool {
	if math.IsInf(v, 0) {
		return false
	}
	if v == math.Trunc(v) && step == math.Trunc(step) && math.Abs(v) < 1<<53 {
		return math.Mod(v, step) == 0
	}
	q := v / step
	if math.IsInf(q, 0) {
		return false
	}
	return math.Abs(q-math.Round(q)) <= 1e-9*math.Max(1, math.Abs(q))
}

func counted(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

// hasType says whether v, a decoded JSON value, is of the JSON Schema type t.
func hasType(v any, t string) bool {
	switch v := v.(type) {
	case nil:
		return t == "null"
	case bool:
		return t == "boolean"
	case float64:
		return t == "number" || t == "integer" && v == math.Trunc(v) && !math.IsInf(v, 0)
	case string:
		return t == "string"
	case []any:
		return t == "array"
	case *jsonObject:
		return t == "object"
	}
	return false
}

// kindOf is how a message names a decoded JSON value: "a string", "the integer 5".
func kindOf(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case float64:
		if v == math.Trunc(v) && !math.IsInf(v, 0) {
			return "the integer " + showNumber(v)
		}
		return "the number " + showNumber(v)
	case string:
		return "a string"
	case []any:
		return "an array"
	}
	return "an object"
}

// showNumber writes a number as JSON would: 5, 2.5, 1e+30.
func showNumber(f float64) string {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return strconv.FormatFloat(f, 'g', -1, 64)
	}
	if f == math.Trunc(f) && math.Abs(f) < 1e21 {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// jsonText is a decoded JSON value written as JSON, members in their order.
func jsonText(v any) string {
	var b strings.Builder
	writeJSON(&b, v)
	return b.String()
}

func writeJSON(b *strings.Builder, v any) {
	switch v := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(v))
	case float64:
		b.WriteString(showNumber(v))
	case string:
		writeJSONString(b, v)
	case []any:
		b.WriteByte('[')
		for i, item := range v {
			if i > 0 {
				b.WriteString(", ")
			}
			writeJSON(b, item)
		}
		b.WriteByte(']')
	case *jsonObject:
		b.WriteByte('{')
		for i, name := range v.names {
			if i > 0 {
				b.WriteString(", ")
			}
			writeJSONString(b, name)
			b.WriteString(": ")
			writeJSON(b, v.values[name])
		}
		b.WriteByte('}')
	}
}

func writeJSONString(b *strings.Builder, s string) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	b.WriteString(strings.TrimSuffix(buf.String(), "\n"))
}

// jsonEqual is equality of decoded JSON values: 1 equals 1.0, objects ignore member order.
func jsonEqual(a, b any) bool {
	switch a := a.(type) {
	case []any:
		bl, ok := b.([]any)
		if !ok || len(a) != len(bl) {
			return false
		}
		for i := range a {
			if !jsonEqual(a[i], bl[i]) {
				return false
			}
		}
		return true
	case *jsonObject:
		bo, ok := b.(*jsonObject)
		if !ok || len(a.names) != len(bo.names) {
			return false
		}
		for _, name := range a.names {
			other, ok := bo.values[name]
			if !ok || !jsonEqual(a.values[name], other) {
				return false
			}
		}
		return true
	}
	switch b.(type) {
	case []any, *jsonObject:
		return false
	}
	return a == b
}

// jsonObject is a decoded JSON object that keeps its members' order, for reporting problems
// in document order. A name given twice keeps its first place and its last value, as
// encoding/json does.
type jsonObject struct {
	names  []string
	values map[string]any
}

// maxJSONDepth bounds the nesting of a decoded document.
const maxJSONDepth = 10000

// decodeJSON decodes one JSON document: null, bool, float64, string, []any and *jsonObject.
func decodeJSON(text string) (any, error) {
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	v, err := decodeValue(dec, 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		if err != nil {
			return nil, err
		}
		return nil, errors.New("there is more after the document")
	}
	return v, nil
}

func decodeValue(dec *json.Decoder, depth int) (any, error) {
	token, err := dec.Token()
	if errors.Is(err, io.EOF) {
		return nil, io.ErrUnexpectedEOF
	}
	if err != nil {
		return nil, err
	}
	switch t := token.(type) {
	case json.Number:
		f, err := strconv.ParseFloat(string(t), 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return nil, err
		}
		return f, nil
	case json.Delim:
		if depth >= maxJSONDepth {
			return nil, fmt.Errorf("nested more than %d deep", maxJSONDepth)
		}
		if t == '[' {
			list := []any{}
			for dec.More() {
				item, err := decodeValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				list = append(list, item)
			}
			_, err := dec.Token()
			return list, err
		}
		object := &jsonObject{values: map[string]any{}}
		for dec.More() {
			key, err := dec.Token()
			if err != nil {
				return nil, err
			}
			name, _ := key.(string)
			value, err := decodeValue(dec, depth+1)
			if err != nil {
				return nil, err
			}
			if _, seen := object.values[name]; !seen {
				object.names = append(object.names, name)
			}
			object.values[name] = value
		}
		_, err := dec.Token()
		return object, err
	}
	return token, nil
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
