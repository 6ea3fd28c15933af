package capwtest

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"capw.dev/sdk/go/capw"
	"capw.dev/sdk/go/internal/host"
)

// Host is a fake capw host for a test: the secrets it grants, how it answers HTTP requests,
// and the log records it received. Install it with [UseHost].
type Host struct {
	// Secrets granted, by grant name; a nil value is granted but not found.
	Secrets map[string][]byte
	// HTTP answers each request; nil refuses every request as not granted.
	HTTP func(SentRequest) (capw.Response, *capw.HTTPError)

	mu   sync.Mutex
	logs []Record
	sent []SentRequest
}

// SentRequest is a request as the host received it.
type SentRequest struct {
	Method string
	// URL is scheme://authority/path?query.
	URL     string
	Headers []capw.Header
	Body    []byte
}

// Header is the first value of the header name, compared case-insensitively.
func (r SentRequest) Header(name string) string {
	for _, h := range r.Headers {
		if strings.EqualFold(h.Name, name) {
			return h.Value
		}
	}
	return ""
}

// Record is one log record.
type Record struct {
	// Level is trace, debug, info, warn or error.
	Level   string
	Message string
	Fields  [][2]string
}

// UseHost installs h as the host for the rest of the test, and the native one again when
// the test ends. Tests that install a host must not run in parallel.
func UseHost(t testing.TB, h *Host) *Host {
	t.Helper()
	previous := host.Current
	host.Current = fake{h}
	t.Cleanup(func() { host.Current = previous })
	return h
}

// Logs is the records logged so far.
func (h *Host) Logs() []Record {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]Record(nil), h.logs...)
}

// Sent is the requests sent so far.
func (h *Host) Sent() []SentRequest {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]SentRequest(nil), h.sent...)
}

// fake adapts a Host to the SDK's host seam.
type fake struct{ h *Host }

func (f fake) Log(level host.Level, message string, fields [][2]string) {
	f.h.mu.Lock()
	defer f.h.mu.Unlock()
	f.h.logs = append(f.h.logs, Record{Level: level.String(), Message: message, Fields: fields})
}

func (f fake) Secret(name string) ([]byte, host.SecretStatus) {
	value, ok := f.h.Secrets[name]
	switch {
	case !ok:
		return nil, host.SecretNotGranted
	case value == nil:
		return nil, host.SecretNotFound
	}
	return value, host.SecretFound
}

func (f fake) Send(r host.Outgoing) (host.Incoming, *host.TransportError) {
	scheme := "http"
	if r.HTTPS {
		scheme = "https"
	}
	sent := SentRequest{Method: r.Method, URL: fmt.Sprintf("%s://%s%s", scheme, r.Authority, r.PathWithQuery), Body: r.Body}
	for _, h := range r.Headers {
		sent.Headers = append(sent.Headers, capw.Header{Name: h.Name, Value: string(h.Value)})
	}
	f.h.mu.Lock()
	f.h.sent = append(f.h.sent, sent)
	f.h.mu.Unlock()
	if f.h.HTTP == nil {
		return host.Incoming{}, &host.TransportError{Kind: host.Denied, Detail: "HttpRequestDenied"}
	}
	response, failed := f.h.HTTP(sent)
	if failed != nil {
		kinds := map[capw.HTTPErrorKind]host.TransportKind{
			capw.HTTPDenied: host.Denied, capw.HTTPConnect: host.Connect, capw.HTTPTimeout: host.Timeout,
			capw.HTTPInvalidURL: host.InvalidURL, capw.HTTPInvalidHeader: host.InvalidHeader, capw.HTTPOther: host.Other,
		}
		return host.Incoming{}, &host.TransportError{Kind: kinds[failed.Kind], Detail: failed.Detail}
	}
	in := host.Incoming{Status: response.Status, Body: response.Body}
	for _, h := range response.Headers {
		in.Headers = append(in.Headers, host.Header{Name: strings.ToLower(h.Name), Value: []byte(h.Value)})
	}
	return in, nil
}

// JSON is a response with status and body, of content type application/json.
func JSON(status int, body string) capw.Response {
	return capw.Response{
		Status:  status,
		Headers: []capw.Header{{Name: "content-type", Value: "application/json"}},
		Body:    []byte(body),
	}
}
