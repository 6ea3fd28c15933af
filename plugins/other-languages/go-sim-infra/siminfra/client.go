package siminfra

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"capw.dev/sdk/go/capw"
)

// DeadlineMargin is the time kept back from the call's deadline after the last request may
// end: enough for the provider to turn a timeout into its answer before the host cancels the
// call.
const DeadlineMargin = 200 * time.Millisecond

// maxQuotedBody is the most of a non-JSON error body quoted in a message.
const maxQuotedBody = 200

// APIError is simcloud's answer with an error status. Its message names the request (POST
// /v1/instances) and quotes simcloud's code, message and field; never the token or a body.
type APIError struct {
	// Request is the method and the path without its query.
	Request string
	Status  int
	Detail  errorDetail
	// RetryAfter is the response's Retry-After, zero when it had none in seconds.
	RetryAfter time.Duration
}

func (e *APIError) Error() string {
	field := ""
	if e.Detail.Field != "" {
		field = fmt.Sprintf(" (field `%s`)", e.Detail.Field)
	}
	return fmt.Sprintf("%s: simcloud answered HTTP %d %s: %s%s", e.Request, e.Status, e.Detail.Code, e.Detail.Message, field)
}

// ProviderError is what the status tells the host:
//   - 429 and 503: retryable unavailable, with Retry-After;
//   - 401 and 403: permanent unauthorized (the token is wrong);
//   - 409: conflict, permanent for idempotency_mismatch and immutable_field (the same call
//     can never succeed), retryable otherwise;
//   - other 4xx: permanent invalid-input;
//   - other statuses: retryable unavailable.
func (e *APIError) ProviderError() *capw.ProviderError {
	code, retryable := Classify(e.Status, e.Detail.Code)
	if !retryable {
		return capw.Permanent(code, "%s", e.Error())
	}
	out := capw.Retryable(code, "%s", e.Error())
	if e.RetryAfter > 0 {
		out = out.After(e.RetryAfter)
	}
	return out
}

// Is reports whether err is simcloud's answer status with error code code.
func Is(err error, status int, code string) bool {
	var api *APIError
	return errors.As(err, &api) && api.Status == status && api.Detail.Code == code
}

// Classify is the contract's error code for an HTTP status with simcloud error code, and
// whether the same call may succeed later.
func Classify(status int, code string) (capw.ErrorCode, bool) {
	switch {
	case status == 429 || status == 503:
		return capw.CodeUnavailable, true
	case status == 401 || status == 403:
		return capw.CodeUnauthorized, false
	case status == 409:
		return capw.CodeConflict, code != codeIdempotencyMismatch && code != codeImmutableField
	case status >= 400 && status < 500:
		return capw.CodeInvalidInput, false
	}
	return capw.CodeUnavailable, true
}

// RequestError is a request that failed before simcloud answered it, or whose answer could
// not be read; what it means to the host is its cause's, or given.
type RequestError struct {
	Request string
	// Meaning is what the host learns; nil to take it from Err.
	Meaning *capw.ProviderError
	Err     error
}

func (e *RequestError) Error() string { return e.Request + ": " + e.Err.Error() }
func (e *RequestError) Unwrap() error { return e.Err }

// ProviderError is the given meaning, else the cause's.
func (e *RequestError) ProviderError() *capw.ProviderError {
	if e.Meaning != nil {
		return e.Meaning
	}
	m := capw.AsProviderError(e.Err)
	return &m
}

// RequestTimeout is how long one request may wait: configured, but never past the call's
// deadline less [DeadlineMargin]; false when no time is left for a request.
func RequestTimeout(configured, remaining time.Duration) (time.Duration, bool) {
	left := remaining - DeadlineMargin
	if left <= 0 {
		return 0, false
	}
	return min(left, configured), true
}

// Query is a query string from key, value pairs, each value percent-encoded (RFC 3986
// unreserved characters stay as they are), e.g. ?cluster=c1&client_token=a%2Fb.
func Query(pairs ...string) string {
	var b strings.Builder
	for i := 0; i+1 < len(pairs); i += 2 {
		if i == 0 {
			b.WriteByte('?')
		} else {
			b.WriteByte('&')
		}
		b.WriteString(pairs[i] + "=" + strings.ReplaceAll(url.QueryEscape(pairs[i+1]), "+", "%20"))
	}
	return b.String()
}

// Client is simcloud as one call sees it: its base URL, the token and the call's deadline.
type Client struct {
	ctx   *capw.Context[Config]
	token string
}

// Connect is a client for the call ctx, with the token read from the secret tokenSecret. Not
// granted is a permanent not-granted; granted but missing, retryable; empty or not UTF-8, a
// permanent invalid-input.
func Connect(ctx *capw.Context[Config]) (*Client, error) {
	grant := ctx.Config.TokenSecret
	value, err := capw.Secret(grant)
	if err != nil {
		return nil, fmt.Errorf("reading simcloud's token: %w", err)
	}
	token := strings.TrimSpace(string(value))
	if token == "" || !utf8.Valid(value) {
		return nil, capw.Permanent(capw.CodeInvalidInput,
			"secret `%s` does not hold a simcloud token: it is empty or not UTF-8", grant)
	}
	return &Client{ctx: ctx, token: token}, nil
}

// Get is GET path (with its query), its JSON answer decoded into out.
func (c *Client) Get(path string, out any) error {
	return c.do("GET", path, nil, out)
}

// Post is POST path with body as JSON, its JSON answer (200 and 201 alike) into out.
func (c *Client) Post(path string, body, out any) error {
	data, err := json.Marshal(body)
	if err != nil {
		return &RequestError{Request: requestName("POST", path), Err: err,
			Meaning: capw.Permanent(capw.CodeInternal, "POST %s: cannot encode the request body", path)}
	}
	return c.do("POST", path, data, out)
}

// Delete is DELETE path; simcloud answers 204 whether or not the resource existed.
func (c *Client) Delete(path string) error {
	return c.do("DELETE", path, nil, nil)
}

// do sends a request with the token and a bounded timeout; a non-2xx answer is an [*APIError].
func (c *Client) do(method, path string, body []byte, out any) error {
	name := requestName(method, path)
	timeout, ok := RequestTimeout(c.ctx.Config.RequestTimeout(), c.ctx.Remaining())
	if !ok {
		return &RequestError{Request: name, Err: errors.New("not sent, the call's deadline is (nearly) over"),
			Meaning: capw.Retryable(capw.CodeUnavailable, "%s: not sent, the call's deadline is (nearly) over", name)}
	}
	request := capw.NewRequest(method, c.ctx.Config.BaseURL()+path).
		WithHeader("authorization", "Bearer "+c.token).
		WithHeader("accept", "application/json").
		WithTimeout(timeout)
	if body != nil {
		request.WithHeader("content-type", "application/json").WithBody(body)
	}
	response, err := request.Send()
	if err != nil {
		return &RequestError{Request: name, Err: err}
	}
	if !response.IsSuccess() {
		return apiError(response, name)
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(response.Body, out); err != nil {
		return &RequestError{Request: name, Err: fmt.Errorf("unreadable answer (HTTP %d): %w", response.Status, err),
			Meaning: capw.Retryable(capw.CodeInternal, "%s: unreadable answer (HTTP %d)", name, response.Status)}
	}
	return nil
}

// requestName is the method and the path without its query, which says enough.
func requestName(method, path string) string {
	path, _, _ = strings.Cut(path, "?")
	return method + " " + path
}

// apiError is the error an unsuccessful response means, with simcloud's error body when it
// sent one.
func apiError(r *capw.Response, request string) *APIError {
	var body errorBody
	detail := errorDetail{Code: fmt.Sprintf("http_%d", r.Status), Message: quoteBody(r.Body)}
	if json.Unmarshal(r.Body, &body) == nil && body.Error.Code != "" {
		detail = body.Error
	}
	after, _ := r.RetryAfter()
	return &APIError{Request: request, Status: r.Status, Detail: detail, RetryAfter: after}
}

// quoteBody is a body that is not simcloud's error JSON (a proxy's page, say), cut short.
func quoteBody(body []byte) string {
	text := []rune(strings.TrimSpace(string(body)))
	switch {
	case len(text) == 0:
		return "(no body)"
	case len(text) > maxQuotedBody:
		return string(text[:maxQuotedBody]) + "..."
	}
	return string(text)
}
