package capw_test

import (
	"strconv"
	"strings"
	"testing"

	"capw.dev/sdk/go/capw"
)

const schema = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "additionalProperties": false,
  "required": ["network"],
  "properties": {
    "network": {
      "type": "object",
      "additionalProperties": false,
      "required": ["cidr"],
      "properties": {"cidr": {"type": "string"}}
    },
    "zones": {"type": "array", "items": {"type": "string"}},
    "port": {"type": "integer", "minimum": 1, "maximum": 65535, "default": 6443}
  }
}`

type network struct {
	CIDR string `json:"cidr"`
}

type config struct {
	Network network  `json:"network"`
	Zones   []string `json:"zones"`
	Port    int      `json:"port"`
}

func (c *config) SetDefaults() { c.Port = 6443 }

func (c config) Validate() []capw.FieldError {
	var errs []capw.FieldError
	for i, z := range c.Zones {
		for _, before := range c.Zones[:i] {
			if z == before {
				errs = append(errs, capw.FieldError{Path: capw.JSONPointer("zones", strconv.Itoa(i)), Message: "listed twice"})
			}
		}
	}
	return errs
}

func paths(errs []capw.FieldError) string {
	out := make([]string, 0, len(errs))
	for _, e := range errs {
		out = append(out, e.Path)
	}
	return strings.Join(out, " ")
}

func TestPointerEscapesTildeAndSlash(t *testing.T) {
	if got := capw.JSONPointer("a/b", "m~n", "0"); got != "/a~1b/m~0n/0" {
		t.Fatalf("got %q", got)
	}
	if got := capw.JSONPointer(); got != "" {
		t.Fatalf("got %q", got)
	}
}

func TestParseSetsDefaultsThenTheJSON(t *testing.T) {
	c, err := capw.ParseConfig[config](`{"network": {"cidr": "10.0.0.0/16"}}`)
	if err != nil || c.Port != 6443 || c.Network.CIDR != "10.0.0.0/16" {
		t.Fatalf("%+v %v", c, err)
	}
	c, err = capw.ParseConfig[config](`{"network": {"cidr": "x"}, "port": 443}`)
	if err != nil || c.Port != 443 {
		t.Fatalf("%+v %v", c, err)
	}
}

func TestParseRefusesTypesUnknownFieldsAndTrailingData(t *testing.T) {
	_, err := capw.ParseConfig[config](`{"network": {"cidr": 5}}`)
	var ce *capw.ConfigError
	if !asConfigError(err, &ce) || ce.Pointer != "/network/cidr" {
		t.Fatalf("%v", err)
	}
	if _, err := capw.ParseConfig[config](`{"network": {"cidr": "x"}, "extra": 1}`); err == nil ||
		!strings.Contains(err.Error(), `unknown field "extra"`) {
		t.Fatalf("%v", err)
	}
	if _, err := capw.ParseConfig[config](`{"network": {"cidr": "x"}} x`); err == nil {
		t.Fatal("trailing data accepted")
	}
	if _, err := capw.ParseConfig[config](`{ this is not JSON`); err == nil {
		t.Fatal("garbage accepted")
	}
	e := capw.AsProviderError(err)
	if e.Code != capw.CodeInvalidInput || e.Retryable {
		t.Fatalf("%+v", e)
	}
}

func asConfigError(err error, target **capw.ConfigError) bool {
	ce, ok := err.(*capw.ConfigError)
	*target = ce
	return ok
}

func TestCheckReportsSchemaProblemsAtTheirPointers(t *testing.T) {
	cases := map[string]string{
		`{"network": {"cidr": "x"}}`:                    "",
		`{"network": {"cidr": 5}}`:                      "/network/cidr",
		`{"network": {"cidr": "x"}, "zones": ["a", 3]}`: "/zones/1",
		`{"network": {"cidr": "x"}, "token": "x"}`:      "/token",
		`{}`:                                    "",
		`{"network": {"cidr": "x"}, "port": 0}`: "/port",
		`{"network": {"cidr": "x"}, "zones": ["a", "b", "a"]}`: "/zones/2",
		`{"network": {"cidr": "x"}, "port": "x", "zones": 1}`:  "/port /zones",
	}
	for text, want := range cases {
		errs := capw.CheckConfig[config](schema, text)
		if text == `{}` {
			if len(errs) != 1 || errs[0].Path != "" || !strings.Contains(errs[0].Message, "network") {
				t.Errorf("%s: %+v", text, errs)
			}
			continue
		}
		if got := paths(errs); !sameSet(got, want) {
			t.Errorf("%s: errors at %q, want %q: %+v", text, got, want, errs)
		}
	}
}

func sameSet(a, b string) bool {
	as, bs := strings.Fields(a), strings.Fields(b)
	if len(as) != len(bs) {
		return false
	}
	for _, x := range as {
		if !strings.Contains(" "+b+" ", " "+x+" ") {
			return false
		}
	}
	return true
}

func TestCheckRefusesWhatIsNotJSONAtTheDocument(t *testing.T) {
	errs := capw.CheckConfig[config](schema, "{ this is not JSON")
	if len(errs) != 1 || errs[0].Path != "" {
		t.Fatalf("%+v", errs)
	}
}

func TestABrokenSchemaRefusesEverything(t *testing.T) {
	errs := capw.CheckConfig[config](`{"type": 12}`, `{}`)
	if len(errs) != 1 || errs[0].Path != "" || !strings.Contains(errs[0].Message, "schema") {
		t.Fatalf("%+v", errs)
	}
}

// check is the problems the schema finds in config; the test fails when the schema does not
// compile.
func check(t *testing.T, schema, config string) []capw.FieldError {
	t.Helper()
	compiled, err := capw.CompileSchema(schema)
	if err != nil {
		t.Fatalf("%s: %v", schema, err)
	}
	return compiled.Check(config)
}

func describe(errs []capw.FieldError) string {
	out := make([]string, 0, len(errs))
	for _, e := range errs {
		out = append(out, "`"+e.Path+"` "+e.Message)
	}
	return strings.Join(out, "; ")
}

// TestEveryCheckedKeyword checks each keyword of the subset: what it accepts, and what it
// refuses with which message, at which pointer.
func TestEveryCheckedKeyword(t *testing.T) {
	cases := []struct {
		schema, config, want string
	}{
		// type
		{`{"type": "string"}`, `"x"`, ``},
		{`{"type": "string"}`, `5`, "`` must be a string, not the integer 5"},
		{`{"type": "integer"}`, `2.0`, ``},
		{`{"type": "integer"}`, `2.5`, "`` must be an integer, not the number 2.5"},
		{`{"type": "number"}`, `2.5`, ``},
		{`{"type": "boolean"}`, `1`, "`` must be a boolean, not the integer 1"},
		{`{"type": "null"}`, `null`, ``},
		{`{"type": "object"}`, `[]`, "`` must be an object, not an array"},
		{`{"type": "array"}`, `{}`, "`` must be an array, not an object"},
		{`{"type": ["string", "null"]}`, `null`, ``},
		{`{"type": ["string", "null"]}`, `true`, "`` must be a string or null, not a boolean"},
		// enum, const
		{`{"enum": ["a", 1, null]}`, `1.0`, ``},
		{`{"enum": ["a", 1, null]}`, `"b"`, "`` must be one of \"a\", 1, null"},
		{`{"enum": [{"a": [1, 2]}]}`, `{"a": [1, 2]}`, ``},
		{`{"enum": [{"a": [1, 2]}]}`, `{"a": [2, 1]}`, "`` must be one of {\"a\": [1, 2]}"},
		{`{"const": true}`, `true`, ``},
		{`{"const": true}`, `1`, "`` must be true"},
		{`{"const": {"a": 1, "b": 2}}`, `{"b": 2, "a": 1}`, ``},
		// numbers
		{`{"minimum": 1}`, `1`, ``},
		{`{"minimum": 1}`, `0`, "`` must be at least 1; got 0"},
		{`{"maximum": 1.5}`, `2`, "`` must be at most 1.5; got 2"},
		{`{"exclusiveMinimum": 1}`, `1`, "`` must be above 1; got 1"},
		{`{"exclusiveMinimum": 1}`, `1.5`, ``},
		{`{"exclusiveMaximum": 1}`, `1`, "`` must be below 1; got 1"},
		{`{"multipleOf": 5}`, `15`, ``},
		{`{"multipleOf": 5}`, `12`, "`` must be a multiple of 5; got 12"},
		{`{"multipleOf": 0.1}`, `0.3`, ``},
		{`{"multipleOf": 0.1}`, `0.35`, "`` must be a multiple of 0.1; got 0.35"},
		{`{"minimum": 1}`, `"x"`, ``},
		// strings
		{`{"minLength": 2}`, `"é"`, "`` must be at least 2 characters long"},
		{`{"maxLength": 2}`, `"éé"`, ``},
		{`{"maxLength": 1}`, `"ab"`, "`` must be at most 1 character long"},
		{`{"pattern": "^[a-z]+$"}`, `"abc"`, ``},
		{`{"pattern": "b"}`, `"abc"`, ``},
		{`{"pattern": "^[a-z]+$"}`, `"ab1"`, "`` must match ^[a-z]+$"},
		{`{"pattern": "^a"}`, `5`, ``},
		// arrays
		{`{"items": {"type": "string"}}`, `["a", 1, "b", true]`,
			"`/1` must be a string, not the integer 1; `/3` must be a string, not a boolean"},
		{`{"minItems": 1}`, `[]`, "`` must have at least 1 item"},
		{`{"maxItems": 2}`, `[1, 2, 3]`, "`` must have at most 2 items"},
		{`{"uniqueItems": true}`, `[1, "a", 1.0, {"x": 1}, {"x": 1}]`,
			"`/2` is listed twice; `/4` is listed twice"},
		{`{"uniqueItems": false}`, `[1, 1]`, ``},
		// objects
		{`{"properties": {"a": {"type": "string"}}}`, `{"a": "x", "b": 1}`, ``},
		{`{"properties": {"a": {"type": "string"}}}`, `{"a": 1}`, "`/a` must be a string, not the integer 1"},
		{`{"required": ["a", "b"]}`, `{"b": 1}`, "`` missing required field `a`"},
		{`{"additionalProperties": false, "properties": {"a": {}}}`, `{"z": 1, "a": 1, "b/c": 2}`,
			"`/z` unknown field; `/b~1c` unknown field"},
		{`{"additionalProperties": {"type": "integer"}, "properties": {"a": {}}}`, `{"a": "x", "b": "y"}`,
			"`/b` must be an integer, not a string"},
		{`{"minProperties": 1}`, `{}`, "`` must have at least 1 field"},
		{`{"maxProperties": 1}`, `{"a": 1, "b": 2}`, "`` must have at most 1 field"},
		// $ref
		{`{"$defs": {"port": {"type": "integer", "minimum": 1}}, "properties": {"p": {"$ref": "#/$defs/port"}}}`,
			`{"p": 0}`, "`/p` must be at least 1; got 0"},
		{`{"$defs": {"a/b": {"type": "string"}}, "items": {"$ref": "#/$defs/a~1b"}}`, `["x", 1]`,
			"`/1` must be a string, not the integer 1"},
		{`{"type": "object", "properties": {"child": {"$ref": "#"}, "n": {"type": "integer"}}}`,
			`{"n": 1, "child": {"n": "x", "child": {"n": 2.5}}}`,
			"`/child/n` must be an integer, not a string; `/child/child/n` must be an integer, not the number 2.5"},
		// true, false, and annotations
		{`true`, `{"anything": [1]}`, ``},
		{`false`, `1`, "`` no value is allowed here"},
		{`{"properties": {"a": false}}`, `{"a": 1}`, "`/a` no value is allowed here"},
		{`{"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": "urn:x", "$comment": "c",
		  "title": "t", "description": "d", "examples": [1], "default": 1, "deprecated": false,
		  "readOnly": false, "writeOnly": false, "format": "uint32", "x-capw-shapes-machine": false}`,
			`"not a uint32"`, ``},
	}
	for _, c := range cases {
		if got := describe(check(t, c.schema, c.config)); got != c.want {
			t.Errorf("%s on %s:\n got %s\nwant %s", c.schema, c.config, got, c.want)
		}
	}
}

// TestProblemsComeInDocumentOrder checks that every problem is reported, an object's own
// before its members', and the members in the order the document gives them.
func TestProblemsComeInDocumentOrder(t *testing.T) {
	errs := capw.CheckConfig[config](schema,
		`{"zones": [1, "a", 2], "token": "x", "port": 70000, "network": {"cidr": 5, "mask": 1}, "other": 1}`)
	want := "`/zones/0` must be a string, not the integer 1; `/zones/2` must be a string, not the integer 2; " +
		"`/token` unknown field; `/port` must be at most 65535; got 70000; " +
		"`/network/cidr` must be a string, not the integer 5; `/network/mask` unknown field; `/other` unknown field"
	if got := describe(errs); got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	errs = capw.CheckConfig[config](schema, `{"network": {}, "port": 1.5}`)
	want = "`/network` missing required field `cidr`; `/port` must be an integer, not the number 1.5"
	if got := describe(errs); got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

func TestCheckRefusesWhatIsNotOneJSONDocument(t *testing.T) {
	s, err := capw.CompileSchema(`true`)
	if err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{``, `{`, `[1,]`, `{"a" 1}`, `{"a": 1} {}`, `1 2`, `nul`} {
		errs := s.Check(text)
		if len(errs) != 1 || errs[0].Path != "" || !strings.HasPrefix(errs[0].Message, "must be a JSON document") {
			t.Errorf("%q: %+v", text, errs)
		}
	}
	if errs := s.Check(strings.Repeat("[", 20000) + strings.Repeat("]", 20000)); len(errs) != 1 {
		t.Errorf("deep nesting: %+v", errs)
	}
}

// TestKeywordsOutsideTheSubsetAreRefused checks that CompileSchema refuses a schema that says
// more than the SDK checks, naming the keyword and where it is.
func TestKeywordsOutsideTheSubsetAreRefused(t *testing.T) {
	refused := []string{
		"oneOf", "anyOf", "allOf", "not", "if", "then", "else", "prefixItems", "contains",
		"minContains", "maxContains", "patternProperties", "propertyNames", "dependentRequired",
		"dependentSchemas", "unevaluatedProperties", "unevaluatedItems", "$anchor",
		"$dynamicRef", "$dynamicAnchor", "$vocabulary", "contentEncoding", "definitions", "nonsense",
	}
	for _, keyword := range refused {
		schema := `{"type": "object", "properties": {"a": {"` + keyword + `": []}}}`
		_, err := capw.CompileSchema(schema)
		want := "#/properties/a/" + keyword + ": `" + keyword + "` is not checked by the SDK; write the rule in Validate"
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v", keyword, err)
		}
		errs := capw.CheckConfig[config](schema, `{}`)
		if len(errs) != 1 || errs[0].Path != "" || !strings.Contains(errs[0].Message, want) {
			t.Errorf("%s: %+v", keyword, errs)
		}
	}
	// Where the keyword is: inside items, additionalProperties, $defs.
	for schema, where := range map[string]string{
		`{"items": {"oneOf": []}}`:                       "#/items/oneOf",
		`{"additionalProperties": {"not": {}}}`:          "#/additionalProperties/not",
		`{"$defs": {"a~b": {"allOf": []}}}`:              "#/$defs/a~0b/allOf",
		`{"properties": {"x/y": {"items": {"if": {}}}}}`: "#/properties/x~1y/items/if",
	} {
		if _, err := capw.CompileSchema(schema); err == nil || !strings.Contains(err.Error(), where+": `") {
			t.Errorf("%s: %v", schema, err)
		}
	}
}

func TestMalformedKeywordsAreRefused(t *testing.T) {
	cases := map[string]string{
		`{"type": 12}`:                   "#/type: `type` must name types",
		`{"type": "float"}`:              "#/type: `type` must name types",
		`{"type": []}`:                   "#/type: `type` must name at least one type",
		`{"enum": 1}`:                    "#/enum: `enum` must be an array",
		`{"minimum": "1"}`:               "#/minimum: `minimum` must be a number",
		`{"exclusiveMaximum": true}`:     "#/exclusiveMaximum: `exclusiveMaximum` must be a number",
		`{"multipleOf": 0}`:              "#/multipleOf: `multipleOf` must be a number above 0",
		`{"minLength": -1}`:              "#/minLength: `minLength` must be a whole number",
		`{"maxItems": 1.5}`:              "#/maxItems: `maxItems` must be a whole number",
		`{"pattern": "(?<=a)b"}`:         "#/pattern: `pattern` is not a regular expression",
		`{"pattern": 1}`:                 "#/pattern: `pattern` must be a string",
		`{"items": [{}]}`:                "#/items: `items` must be one schema",
		`{"uniqueItems": 1}`:             "#/uniqueItems: `uniqueItems` must be a boolean",
		`{"properties": []}`:             "#/properties: `properties` must be an object of schemas",
		`{"properties": {"a": 1}}`:       "#/properties/a: a schema must be an object or a boolean",
		`{"required": "a"}`:              "#/required: `required` must be an array of names",
		`{"required": [1]}`:              "#/required: `required` must be an array of names",
		`{"additionalProperties": "no"}`: "#/additionalProperties: a schema must be",
		`{"$ref": "#/$defs/missing"}`:    "#/$ref: `$ref` \"#/$defs/missing\" names no schema",
		`{"$ref": "other.json"}`:         "#/$ref: `$ref` \"other.json\" is not checked by the SDK",
		`{"$ref": "#/properties/a"}`:     "is not checked by the SDK",
		`{"$ref": "#"}`:                  "leads back to itself",
		`{"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}}`: "leads back to itself",
		`[]`:                   "#: a schema must be an object or a boolean",
		`{"type": "object"} x`: "the config schema is not JSON",
	}
	for schema, want := range cases {
		_, err := capw.CompileSchema(schema)
		if err == nil || !strings.Contains(err.Error(), want) || !strings.HasPrefix(err.Error(), "the config schema") {
			t.Errorf("%s: %v, want %q", schema, err, want)
		}
	}
}

func TestIntegerAcceptsAWholeFloatAndLengthsCountCodePoints(t *testing.T) {
	if errs := check(t, `{"type": "integer", "maximum": 3}`, `3.0`); len(errs) != 0 {
		t.Fatalf("%+v", errs)
	}
	if errs := check(t, `{"minLength": 3, "maxLength": 3}`, `"日本語"`); len(errs) != 0 {
		t.Fatalf("%+v", errs)
	}
}
