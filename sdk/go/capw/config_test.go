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
