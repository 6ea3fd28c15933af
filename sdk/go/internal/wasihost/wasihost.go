// Package wasihost serves the SDK's host capabilities inside a component: the contract's
// host-log and host-secrets, and outbound HTTP through wasi:http/outgoing-handler, blocking on
// its pollables. Importing it installs it as [host.Current].
package wasihost

import (
	"fmt"
	"time"

	"capw.dev/sdk/go/internal/host"
	"capw.dev/sdk/go/internal/wit/imports/capw_provider_host_log"
	"capw.dev/sdk/go/internal/wit/imports/capw_provider_host_secrets"
	"capw.dev/sdk/go/internal/wit/imports/wasi_http_outgoing_handler"
	"capw.dev/sdk/go/internal/wit/imports/wasi_http_types"
	"capw.dev/sdk/go/internal/wit/imports/wasi_io_streams"
	witTypes "go.bytecodealliance.org/pkg/wit/types"
)

func init() { host.Current = Host{} }

// writeChunk is the most blocking-write-and-flush accepts per call (wasi:io 0.2).
const writeChunk = 4096

// readChunk is the bytes asked for per read of a response body.
const readChunk = 64 * 1024

// Host is the capw host, through the component's imports.
type Host struct{}

// Log writes one record to the host's log.
func (Host) Log(level host.Level, message string, fields [][2]string) {
	tuples := make([]witTypes.Tuple2[string, string], 0, len(fields))
	for _, f := range fields {
		tuples = append(tuples, witTypes.Tuple2[string, string]{F0: f[0], F1: f[1]})
	}
	capw_provider_host_log.Log(uint8(level), message, tuples)
}

// Secret reads a granted secret.
func (Host) Secret(name string) ([]byte, host.SecretStatus) {
	r := capw_provider_host_secrets.Get(name)
	if r.IsOk() {
		return r.Ok(), host.SecretFound
	}
	if r.Err().Tag() == capw_provider_host_secrets.SecretError_NotFound {
		return nil, host.SecretNotFound
	}
	return nil, host.SecretNotGranted
}

func method(m string) wasi_http_types.Method {
	switch m {
	case "GET":
		return wasi_http_types.MakeMethodGet()
	case "HEAD":
		return wasi_http_types.MakeMethodHead()
	case "POST":
		return wasi_http_types.MakeMethodPost()
	case "PUT":
		return wasi_http_types.MakeMethodPut()
	case "PATCH":
		return wasi_http_types.MakeMethodPatch()
	case "DELETE":
		return wasi_http_types.MakeMethodDelete()
	case "OPTIONS":
		return wasi_http_types.MakeMethodOptions()
	}
	return wasi_http_types.MakeMethodOther(m)
}

func other(format string, args ...any) *host.TransportError {
	return &host.TransportError{Kind: host.Other, Detail: fmt.Sprintf(format, args...)}
}

// Send sends one request and reads the whole response.
func (Host) Send(r host.Outgoing) (host.Incoming, *host.TransportError) {
	entries := make([]witTypes.Tuple2[string, []uint8], 0, len(r.Headers))
	for _, h := range r.Headers {
		entries = append(entries, witTypes.Tuple2[string, []uint8]{F0: h.Name, F1: h.Value})
	}
	fields := wasi_http_types.FieldsFromList(entries)
	if fields.IsErr() {
		return host.Incoming{}, &host.TransportError{Kind: host.InvalidHeader, Detail: badHeader(entries)}
	}
	request := wasi_http_types.MakeOutgoingRequest(fields.Ok())
	if request.SetMethod(method(r.Method)).IsErr() {
		return host.Incoming{}, other("the host refused the method %s", r.Method)
	}
	scheme := wasi_http_types.MakeSchemeHttp()
	if r.HTTPS {
		scheme = wasi_http_types.MakeSchemeHttps()
	}
	invalid := func(what string) *host.TransportError {
		return &host.TransportError{Kind: host.InvalidURL, Detail: "the host refused the " + what}
	}
	if request.SetScheme(witTypes.Some(scheme)).IsErr() {
		return host.Incoming{}, invalid("scheme")
	}
	if request.SetAuthority(witTypes.Some(r.Authority)).IsErr() {
		return host.Incoming{}, invalid("authority")
	}
	if request.SetPathWithQuery(witTypes.Some(r.PathWithQuery)).IsErr() {
		return host.Incoming{}, invalid("path")
	}
	// The body must be taken before the request is handed over, and written after: its
	// stream has a bounded buffer that only drains once the request is on its way.
	var body *wasi_http_types.OutgoingBody
	if len(r.Body) > 0 {
		taken := request.Body()
		if taken.IsErr() {
			return host.Incoming{}, other("request body already taken")
		}
		body = taken.Ok()
	}
	options := witTypes.None[*wasi_http_types.RequestOptions]()
	if r.Timeout > 0 {
		options = witTypes.Some(requestOptions(r.Timeout))
	}
	handled := wasi_http_outgoing_handler.Handle(request, options)
	if handled.IsErr() {
		return host.Incoming{}, transportError(handled.Err())
	}
	future := handled.Ok()
	if body != nil {
		if err := writeBody(body, r.Body); err != nil {
			return host.Incoming{}, err
		}
		if finished := wasi_http_types.OutgoingBodyFinish(body, witTypes.None[*wasi_http_types.Fields]()); finished.IsErr() {
			return host.Incoming{}, transportError(finished.Err())
		}
	}
	pollable := future.Subscribe()
	pollable.Block()
	pollable.Drop()
	got := future.Get()
	future.Drop()
	if got.IsNone() {
		return host.Incoming{}, other("response not ready")
	}
	if got.Some().IsErr() {
		return host.Incoming{}, other("response already taken")
	}
	if got.Some().Ok().IsErr() {
		return host.Incoming{}, transportError(got.Some().Ok().Err())
	}
	response := got.Some().Ok().Ok()
	defer response.Drop()
	in := host.Incoming{Status: int(response.Status())}
	headers := response.Headers()
	for _, e := range headers.Entries() {
		in.Headers = append(in.Headers, host.Header{Name: e.F0, Value: e.F1})
	}
	headers.Drop()
	consumed := response.Consume()
	if consumed.IsErr() {
		return host.Incoming{}, other("response body already taken")
	}
	incoming := consumed.Ok()
	data, err := readBody(incoming)
	if err != nil {
		return host.Incoming{}, err
	}
	// Trailers are not read; finishing releases the body's resources.
	wasi_http_types.IncomingBodyFinish(incoming).Drop()
	in.Body = data
	return in, nil
}

func requestOptions(timeout time.Duration) *wasi_http_types.RequestOptions {
	options := wasi_http_types.MakeRequestOptions()
	nanos := witTypes.Some(uint64(timeout.Nanoseconds()))
	// A host that does not support a timeout refuses to set it; the call's deadline still
	// bounds the request, so the refusal is not an error.
	options.SetConnectTimeout(nanos)
	options.SetFirstByteTimeout(nanos)
	options.SetBetweenBytesTimeout(nanos)
	return options
}

func writeBody(body *wasi_http_types.OutgoingBody, data []byte) *host.TransportError {
	taken := body.Write()
	if taken.IsErr() {
		return other("request body stream already taken")
	}
	stream := taken.Ok()
	// The stream is a child of the body: it must be gone before the body is finished.
	defer stream.Drop()
	for len(data) > 0 {
		n := min(len(data), writeChunk)
		if written := stream.BlockingWriteAndFlush(data[:n]); written.IsErr() {
			return other("writing the request body: %s", streamError(written.Err()))
		}
		data = data[n:]
	}
	return nil
}

func readBody(body *wasi_http_types.IncomingBody) ([]byte, *host.TransportError) {
	taken := body.Stream()
	if taken.IsErr() {
		return nil, other("response body stream already taken")
	}
	stream := taken.Ok()
	defer stream.Drop()
	var data []byte
	for {
		chunk := stream.BlockingRead(readChunk)
		if chunk.IsOk() {
			data = append(data, chunk.Ok()...)
			continue
		}
		e := chunk.Err()
		if e.Tag() == wasi_io_streams.StreamError_Closed {
			return data, nil
		}
		failure := e.LastOperationFailed()
		defer failure.Drop()
		if code := wasi_http_types.HttpErrorCode(failure); code.IsSome() {
			return nil, transportError(code.Some())
		}
		return nil, other("reading the response body: %s", failure.ToDebugString())
	}
}

func streamError(e wasi_io_streams.StreamError) string {
	if e.Tag() == wasi_io_streams.StreamError_Closed {
		return "stream closed"
	}
	failure := e.LastOperationFailed()
	defer failure.Drop()
	return failure.ToDebugString()
}

// badHeader is the header the host refuses; from-list does not say which, so ask one at a
// time.
func badHeader(entries []witTypes.Tuple2[string, []uint8]) string {
	for _, e := range entries {
		one := wasi_http_types.FieldsFromList([]witTypes.Tuple2[string, []uint8]{e})
		if one.IsErr() {
			return e.F0
		}
		one.Ok().Drop()
	}
	return ""
}

// codeNames names the transport's error codes for messages.
var codeNames = map[uint8]string{
	wasi_http_types.ErrorCode_DnsTimeout:              "DnsTimeout",
	wasi_http_types.ErrorCode_DnsError:                "DnsError",
	wasi_http_types.ErrorCode_DestinationNotFound:     "DestinationNotFound",
	wasi_http_types.ErrorCode_DestinationUnavailable:  "DestinationUnavailable",
	wasi_http_types.ErrorCode_DestinationIpUnroutable: "DestinationIpUnroutable",
	wasi_http_types.ErrorCode_ConnectionRefused:       "ConnectionRefused",
	wasi_http_types.ErrorCode_ConnectionTerminated:    "ConnectionTerminated",
	wasi_http_types.ErrorCode_ConnectionTimeout:       "ConnectionTimeout",
	wasi_http_types.ErrorCode_ConnectionReadTimeout:   "ConnectionReadTimeout",
	wasi_http_types.ErrorCode_ConnectionWriteTimeout:  "ConnectionWriteTimeout",
	wasi_http_types.ErrorCode_ConnectionLimitReached:  "ConnectionLimitReached",
	wasi_http_types.ErrorCode_HttpResponseTimeout:     "HttpResponseTimeout",
	wasi_http_types.ErrorCode_HttpResponseIncomplete:  "HttpResponseIncomplete",
	wasi_http_types.ErrorCode_HttpProtocolError:       "HttpProtocolError",
	wasi_http_types.ErrorCode_TlsProtocolError:        "TlsProtocolError",
	wasi_http_types.ErrorCode_TlsCertificateError:     "TlsCertificateError",
	wasi_http_types.ErrorCode_InternalError:           "InternalError",
}

func transportError(code wasi_http_types.ErrorCode) *host.TransportError {
	tag := code.Tag()
	name, ok := codeNames[tag]
	if !ok {
		name = fmt.Sprintf("ErrorCode(%d)", tag)
	}
	switch tag {
	// The host refuses authorities outside the provider's grants with these.
	case wasi_http_types.ErrorCode_HttpRequestDenied, wasi_http_types.ErrorCode_DestinationIpProhibited:
		return &host.TransportError{Kind: host.Denied, Detail: name}
	case wasi_http_types.ErrorCode_DnsTimeout, wasi_http_types.ErrorCode_ConnectionTimeout,
		wasi_http_types.ErrorCode_ConnectionReadTimeout, wasi_http_types.ErrorCode_ConnectionWriteTimeout,
		wasi_http_types.ErrorCode_HttpResponseTimeout:
		return &host.TransportError{Kind: host.Timeout, Detail: name}
	case wasi_http_types.ErrorCode_DnsError, wasi_http_types.ErrorCode_DestinationNotFound,
		wasi_http_types.ErrorCode_DestinationUnavailable, wasi_http_types.ErrorCode_DestinationIpUnroutable,
		wasi_http_types.ErrorCode_ConnectionRefused, wasi_http_types.ErrorCode_ConnectionTerminated,
		wasi_http_types.ErrorCode_ConnectionLimitReached:
		return &host.TransportError{Kind: host.Connect, Detail: name}
	case wasi_http_types.ErrorCode_HttpRequestUriInvalid, wasi_http_types.ErrorCode_HttpRequestUriTooLong:
		return &host.TransportError{Kind: host.InvalidURL, Detail: "the host refused the URL"}
	}
	return &host.TransportError{Kind: host.Other, Detail: name}
}
