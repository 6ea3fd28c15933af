package capw

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"capw.dev/sdk/go/internal/host"
)

// Request is an outbound HTTP request through the host's wasi:http. The host lets a provider
// reach only the authorities (host or host:port) granted to it in its WasmProvider; any other
// request fails with an [HTTPError] of kind [HTTPDenied].
//
// A call must not wait for slow work to finish: when a backend says "later", answer
// in-progress or a retryable error ([Response.Throttled]) and let the host call again.
type Request struct {
	// Method is GET, HEAD, POST, PUT, PATCH or DELETE.
	Method string
	// URL is an absolute http:// or https:// URL.
	URL     string
	Headers []Header
	Body    []byte
	// Timeout bounds connecting, the time to the first response byte and the time between
	// bytes, each; zero leaves the host's defaults and the call's deadline.
	// [Context.Remaining] is a good bound.
	Timeout time.Duration
}

// Header is one header field; a name given twice sends both values.
type Header struct {
	Name  string
	Value string
}

// NewRequest is a request with method to url, checked when sent.
func NewRequest(method, url string) *Request {
	return &Request{Method: method, URL: url}
}

// WithHeader adds a header.
func (r *Request) WithHeader(name, value string) *Request {
	r.Headers = append(r.Headers, Header{Name: name, Value: value})
	return r
}

// WithBody sets the body; a body gets a content-length header unless one is set.
func (r *Request) WithBody(body []byte) *Request {
	r.Body = body
	return r
}

// WithTimeout sets [Request.Timeout].
func (r *Request) WithTimeout(d time.Duration) *Request {
	r.Timeout = d
	return r
}

// HTTPErrorKind says why a request got no response.
type HTTPErrorKind uint8

// Why a request got no response.
const (
	// HTTPDenied: the host refused the request, its authority is not granted. Permanent until
	// the operator changes the grants.
	HTTPDenied HTTPErrorKind = iota
	// HTTPConnect: no connection (DNS, refused, reset, unreachable). Usually transient.
	HTTPConnect
	// HTTPTimeout: connecting, the first byte or a later one took longer than allowed.
	HTTPTimeout
	// HTTPInvalidURL: not an absolute http:// or https:// URL this client can send.
	HTTPInvalidURL
	// HTTPInvalidHeader: a header name or value the host refused.
	HTTPInvalidHeader
	// HTTPOther: any other transport failure, or no host at all outside a component.
	HTTPOther
)

// HTTPError is a request that got no response.
type HTTPError struct {
	Kind HTTPErrorKind
	// Authority is where the request went (host:port), when known.
	Authority string
	// Detail is the transport's word or the reason, e.g. ConnectionRefused.
	Detail string
}

// Error says what happened and where.
func (e *HTTPError) Error() string {
	switch e.Kind {
	case HTTPDenied:
		return fmt.Sprintf("request to `%s` denied: the host is not granted to this provider", e.Authority)
	case HTTPConnect:
		return fmt.Sprintf("cannot connect to `%s`: %s", e.Authority, e.Detail)
	case HTTPTimeout:
		return fmt.Sprintf("request to `%s` timed out: %s", e.Authority, e.Detail)
	case HTTPInvalidURL:
		return "invalid url: " + e.Detail
	case HTTPInvalidHeader:
		return "invalid or forbidden header: " + e.Detail
	}
	return "http request failed: " + e.Detail
}

// ProviderError: a denied host is a missing grant, a bad URL or header bad input, transport
// failures are retryable.
func (e *HTTPError) ProviderError() *ProviderError {
	switch e.Kind {
	case HTTPDenied:
		return Permanent(CodeNotGranted, "%s", e.Error())
	case HTTPConnect, HTTPTimeout:
		return Retryable(CodeUnavailable, "%s", e.Error())
	case HTTPInvalidURL, HTTPInvalidHeader:
		return Permanent(CodeInvalidInput, "%s", e.Error())
	}
	return Retryable(CodeInternal, "%s", e.Error())
}

// Send sends the request and reads the whole response. Any status is a response, 4xx and
// 5xx included ([Response.ErrorForStatus]).
//
// The error, when there is no response, is an [*HTTPError].
func (r *Request) Send() (*Response, error) {
	out, err := r.outgoing()
	if err != nil {
		return nil, err
	}
	in, failed := host.Current.Send(out)
	if failed != nil {
		e := &HTTPError{Kind: HTTPOther, Authority: out.Authority, Detail: failed.Detail}
		switch failed.Kind {
		case host.Denied:
			e.Kind = HTTPDenied
		case host.Connect:
			e.Kind = HTTPConnect
		case host.Timeout:
			e.Kind = HTTPTimeout
		case host.InvalidURL:
			e.Kind = HTTPInvalidURL
		case host.InvalidHeader:
			e.Kind = HTTPInvalidHeader
		}
		return nil, e
	}
	headers := make([]Header, 0, len(in.Headers))
	for _, h := range in.Headers {
		headers = append(headers, Header{Name: h.Name, Value: string(h.Value)})
	}
	return &Response{Status: in.Status, Headers: headers, Body: in.Body}, nil
}

// outgoing is the request split as wasi:http takes it.
func (r *Request) outgoing() (host.Outgoing, error) {
	invalid := func(reason string) error {
		return &HTTPError{Kind: HTTPInvalidURL, Detail: fmt.Sprintf("`%s`: %s", r.URL, reason)}
	}
	scheme, rest, ok := strings.Cut(r.URL, "://")
	if !ok {
		return host.Outgoing{}, invalid("not an absolute URL")
	}
	var https bool
	switch strings.ToLower(scheme) {
	case "https":
		https = true
	case "http":
	default:
		return host.Outgoing{}, invalid("scheme must be http or https")
	}
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	authority, tail := rest[:end], rest[end:]
	if authority == "" {
		return host.Outgoing{}, invalid("missing host")
	}
	// user@host hides the real destination from a reader of the config; the grants are by
	// host, so say plainly where a request goes.
	if strings.Contains(authority, "@") {
		return host.Outgoing{}, invalid("user info is not supported")
	}
	if strings.ContainsFunc(r.URL, func(c rune) bool { return c <= ' ' || c == 0x7f }) {
		return host.Outgoing{}, invalid("contains whitespace or control characters")
	}
	tail, _, _ = strings.Cut(tail, "#")
	if !strings.HasPrefix(tail, "/") {
		tail = "/" + tail
	}
	method := strings.ToUpper(r.Method)
	if method == "" {
		method = "GET"
	}
	headers := make([]host.Header, 0, len(r.Headers)+1)
	hasLength := false
	for _, h := range r.Headers {
		hasLength = hasLength || strings.EqualFold(h.Name, "content-length")
		headers = append(headers, host.Header{Name: h.Name, Value: []byte(h.Value)})
	}
	if len(r.Body) > 0 && !hasLength {
		// Without a length the host streams the body chunked, which some APIs refuse.
		headers = append(headers, host.Header{Name: "content-length", Value: []byte(strconv.Itoa(len(r.Body)))})
	}
	return host.Outgoing{
		Method:        method,
		HTTPS:         https,
		Authority:     authority,
		PathWithQuery: tail,
		Headers:       headers,
		Body:          r.Body,
		Timeout:       r.Timeout,
	}, nil
}

// Response is a whole response.
type Response struct {
	// Status is the status code, e.g. 200.
	Status int
	// Headers in received order; names lowercase, as wasi:http gives them.
	Headers []Header
	Body    []byte
}

// Header is the first value of header name, compared case-insensitively; "" when absent.
func (r *Response) Header(name string) string {
	for _, h := range r.Headers {
		if strings.EqualFold(h.Name, name) {
			return h.Value
		}
	}
	return ""
}

// IsSuccess reports a 2xx status.
func (r *Response) IsSuccess() bool { return r.Status >= 200 && r.Status < 300 }

// RetryAfter is Retry-After in its delta-seconds form; false for the HTTP-date form and for
// a missing or malformed header, where the host's own backoff applies.
func (r *Response) RetryAfter() (time.Duration, bool) {
	seconds, err := strconv.ParseUint(strings.TrimSpace(r.Header("retry-after")), 10, 32)
	if err != nil {
		return 0, false
	}
	return time.Duration(seconds) * time.Second, true
}

// Throttled is, for 429 and 503, the retryable unavailable error to answer the call with,
// carrying Retry-After; nil for every other status.
func (r *Response) Throttled() *ProviderError {
	if r.Status != 429 && r.Status != 503 {
		return nil
	}
	e := Retryable(CodeUnavailable, "backend answered HTTP %d", r.Status)
	if after, ok := r.RetryAfter(); ok {
		return e.After(after)
	}
	return e
}

// ErrorForStatus is nil for a 2xx status, else the error the status means for a call: 429
// and 503 as [Response.Throttled]; 401 and 403 unauthorized; 409 a retryable conflict; other
// 4xx invalid-input; other statuses a retryable unavailable.
func (r *Response) ErrorForStatus() *ProviderError {
	if r.IsSuccess() {
		return nil
	}
	if throttled := r.Throttled(); throttled != nil {
		return throttled
	}
	switch {
	case r.Status == 401 || r.Status == 403:
		return Permanent(CodeUnauthorized, "backend answered HTTP %d", r.Status)
	case r.Status == 409:
		return Retryable(CodeConflict, "backend answered HTTP %d", r.Status)
	case r.Status >= 400 && r.Status < 500:
		return Permanent(CodeInvalidInput, "backend answered HTTP %d", r.Status)
	}
	return Retryable(CodeUnavailable, "backend answered HTTP %d", r.Status)
}
