package capw

import (
	"errors"
	"fmt"
	"time"
)

// ErrorCode says why a call failed.
type ErrorCode uint8

// The contract's error codes.
const (
	// CodeInvalidInput: the config or request is invalid; retrying the same input fails again.
	CodeInvalidInput ErrorCode = iota
	// CodeNotGranted: the provider lacks a grant it needs (a secret, an HTTP host).
	CodeNotGranted
	// CodeUnauthorized: the backend refused the credentials.
	CodeUnauthorized
	// CodeQuotaExceeded: the backend is out of capacity or quota.
	CodeQuotaExceeded
	// CodeUnavailable: the backend is unreachable, overloaded or rate-limiting.
	CodeUnavailable
	// CodeConflict: the resource is in a state that forbids the operation now.
	CodeConflict
	// CodeUnsupported: the provider does not implement this function or case.
	CodeUnsupported
	// CodeInternal: anything else.
	CodeInternal
)

// String is the contract's name of the code, e.g. invalid-input.
func (c ErrorCode) String() string {
	switch c {
	case CodeInvalidInput:
		return "invalid-input"
	case CodeNotGranted:
		return "not-granted"
	case CodeUnauthorized:
		return "unauthorized"
	case CodeQuotaExceeded:
		return "quota-exceeded"
	case CodeUnavailable:
		return "unavailable"
	case CodeConflict:
		return "conflict"
	case CodeUnsupported:
		return "unsupported"
	case CodeInternal:
		return "internal"
	}
	return fmt.Sprintf("code(%d)", uint8(c))
}

// ProviderError is a failed call as the host understands it: it becomes a condition on the
// object and, when Retryable, the host calls again after RetryAfter (or its own backoff when
// that is zero).
//
// Return it (or an error wrapping it) from an extension-point method. The message never holds
// secret material.
type ProviderError struct {
	Code ErrorCode
	// Message says what went wrong, for humans.
	Message string
	// Retryable: the same call may succeed later without a change of input.
	Retryable bool
	// RetryAfter is the hint for when to retry; zero leaves it to the host.
	RetryAfter time.Duration
}

// Error is the message.
func (e *ProviderError) Error() string { return e.Message }

// Retryable is an error the host retries: an outage, a rate limit, a conflict that resolves
// itself.
func Retryable(code ErrorCode, format string, args ...any) *ProviderError {
	return &ProviderError{Code: code, Message: fmt.Sprintf(format, args...), Retryable: true}
}

// Permanent is an error the host does not retry: the same input fails again.
func Permanent(code ErrorCode, format string, args ...any) *ProviderError {
	return &ProviderError{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Unsupported is the answer of a function, or a case of one, the provider does not implement;
// what names it, e.g. bootstrap.generate.
func Unsupported(what string) *ProviderError {
	return Permanent(CodeUnsupported, "%s is not supported by this provider", what)
}

// After asks the host to retry after d (e.g. from an HTTP Retry-After). It also makes the
// error retryable: a retry hint on an error that must not be retried would contradict itself.
func (e *ProviderError) After(d time.Duration) *ProviderError {
	out := *e
	out.Retryable = true
	out.RetryAfter = d
	return &out
}

// ProviderErrorer is an error that knows what it means to the host, as [SecretError] and
// [HTTPError] do. [AsProviderError] asks it.
type ProviderErrorer interface {
	ProviderError() *ProviderError
}

// AsProviderError is what err tells the host.
//
// A [*ProviderError] anywhere in err's chain gives its code and retry hints; an error of the
// chain that implements [ProviderErrorer] gives its own. The message is err's whole message,
// so the context a wrapping fmt.Errorf added stays. Any other error is a retryable
// internal error: the host backs off and calls again, as a controller requeues on an error it
// does not know.
func AsProviderError(err error) ProviderError {
	var pe *ProviderError
	if errors.As(err, &pe) {
		out := *pe
		out.Message = err.Error()
		return out
	}
	var knows ProviderErrorer
	if errors.As(err, &knows) {
		out := *knows.ProviderError()
		out.Message = err.Error()
		return out
	}
	return ProviderError{Code: CodeInternal, Message: err.Error(), Retryable: true}
}
