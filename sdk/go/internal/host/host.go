// Package host is the seam between the SDK and whatever serves its capabilities: the capw host
// inside a component (package wasihost), nothing in a native build, or a test's fake (package
// capwtest).
package host

import (
	"fmt"
	"os"
	"strings"
	"time"
)

// Level is the level of a log record, in the contract's order.
type Level uint8

// The contract's log levels.
const (
	Trace Level = iota
	Debug
	Info
	Warn
	Error
)

// String is the level's lowercase name.
func (l Level) String() string {
	switch l {
	case Trace:
		return "trace"
	case Debug:
		return "debug"
	case Info:
		return "info"
	case Warn:
		return "warn"
	case Error:
		return "error"
	}
	return fmt.Sprintf("level(%d)", uint8(l))
}

// SecretStatus says whether a secret was read.
type SecretStatus uint8

// What the host answers for a secret.
const (
	SecretFound SecretStatus = iota
	SecretNotGranted
	SecretNotFound
)

// Header is one header field; a name may appear more than once.
type Header struct {
	Name  string
	Value []byte
}

// Outgoing is a request as the transport sends it: already split into scheme, authority and
// path, as wasi:http takes it.
type Outgoing struct {
	Method        string
	HTTPS         bool
	Authority     string
	PathWithQuery string
	Headers       []Header
	Body          []byte
	// Timeout bounds connecting, the first byte and the time between bytes; zero leaves the
	// host's defaults.
	Timeout time.Duration
}

// Incoming is a whole response.
type Incoming struct {
	Status  int
	Headers []Header
	Body    []byte
}

// TransportKind says why a request got no response.
type TransportKind uint8

// Why a request failed.
const (
	// Denied: the authority is not granted to the provider.
	Denied TransportKind = iota
	// Connect: DNS failure, refused, reset or unreachable.
	Connect
	// Timeout: connecting or reading took longer than allowed.
	Timeout
	// InvalidURL: the host refused the URL.
	InvalidURL
	// InvalidHeader: the host refused a header.
	InvalidHeader
	// Other: anything else, or no host at all.
	Other
)

// TransportError is a request that got no response.
type TransportError struct {
	Kind TransportKind
	// Detail is the transport's own word for it, e.g. ConnectionRefused.
	Detail string
}

// Host serves the capabilities the contract imports.
type Host interface {
	// Log writes one record with its fields (key, value).
	Log(level Level, message string, fields [][2]string)
	// Secret reads the secret granted under name.
	Secret(name string) ([]byte, SecretStatus)
	// Send sends one request and reads the whole response.
	Send(request Outgoing) (Incoming, *TransportError)
}

// Current is the host the SDK talks to: [Native] until a component's bindings or a test
// replace it.
var Current Host = Native{}

// Native is the host of a native build (a unit test): records go to stderr, no secret is
// granted and no request is sent.
type Native struct{}

// Log writes the record to stderr, one line.
func (Native) Log(level Level, message string, fields [][2]string) {
	var b strings.Builder
	fmt.Fprintf(&b, "[%s] %s", level, message)
	for _, f := range fields {
		fmt.Fprintf(&b, " %s=%q", f[0], f[1])
	}
	fmt.Fprintln(os.Stderr, b.String())
}

// Secret grants nothing.
func (Native) Secret(string) ([]byte, SecretStatus) { return nil, SecretNotGranted }

// Send sends nothing.
func (Native) Send(Outgoing) (Incoming, *TransportError) {
	return Incoming{}, &TransportError{
		Kind:   Other,
		Detail: "no wasi:http host: outbound HTTP works only inside a component (or with capwtest's fake host)",
	}
}
