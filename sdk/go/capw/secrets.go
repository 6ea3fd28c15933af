package capw

import (
	"fmt"

	"capw.dev/sdk/go/internal/host"
)

// SecretError is a secret that could not be read.
type SecretError struct {
	// Name is the grant name asked for.
	Name string
	// NotFound: granted, but the Secret behind the grant does not exist (yet); false means
	// not granted at all.
	NotFound bool
}

// The two reasons, for errors.Is.
var (
	// ErrSecretNotGranted: no grant of that name. Permanent until the grants change.
	ErrSecretNotGranted = &SecretError{}
	// ErrSecretNotFound: granted, but the Secret does not exist (yet). It may appear.
	ErrSecretNotFound = &SecretError{NotFound: true}
)

// Error names the grant and the reason, never a value.
func (e *SecretError) Error() string {
	if e.NotFound {
		return fmt.Sprintf("secret `%s`: granted, but the secret does not exist", e.Name)
	}
	return fmt.Sprintf("secret `%s`: not granted to this provider", e.Name)
}

// Is matches [ErrSecretNotGranted] and [ErrSecretNotFound] by reason.
func (e *SecretError) Is(target error) bool {
	t, ok := target.(*SecretError)
	return ok && (t == ErrSecretNotGranted || t == ErrSecretNotFound) && t.NotFound == e.NotFound
}

// ProviderError: a missing grant is a permanent not-granted; a granted secret that does not
// exist yet may appear, so the host retries.
func (e *SecretError) ProviderError() *ProviderError {
	if e.NotFound {
		return Retryable(CodeUnavailable, "%s", e.Error())
	}
	return Permanent(CodeNotGranted, "%s", e.Error())
}

// Secret is the value of the secret the operator granted to this provider under name (in its
// WasmProvider). Never log it or put it in a message.
func Secret(name string) ([]byte, error) {
	value, status := host.Current.Secret(name)
	switch status {
	case host.SecretFound:
		return value, nil
	case host.SecretNotFound:
		return nil, &SecretError{Name: name, NotFound: true}
	}
	return nil, &SecretError{Name: name}
}
