package capw_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"capw.dev/sdk/go/capw"
)

func TestRetryableAndPermanentSetTheFlag(t *testing.T) {
	if e := capw.Retryable(capw.CodeUnavailable, "down %d", 1); !e.Retryable || e.Message != "down 1" {
		t.Fatalf("%+v", e)
	}
	if e := capw.Permanent(capw.CodeInvalidInput, "bad"); e.Retryable {
		t.Fatalf("%+v", e)
	}
	e := capw.Unsupported("bootstrap.generate")
	if e.Code != capw.CodeUnsupported || e.Retryable || e.Message != "bootstrap.generate is not supported by this provider" {
		t.Fatalf("%+v", e)
	}
}

func TestAfterMakesRetryableWithoutChangingTheOriginal(t *testing.T) {
	p := capw.Permanent(capw.CodeConflict, "busy")
	e := p.After(1500 * time.Millisecond)
	if !e.Retryable || e.RetryAfter != 1500*time.Millisecond || p.Retryable {
		t.Fatalf("%+v %+v", e, p)
	}
	if capw.Millis(time.Duration(1<<62)) != ^uint32(0) || capw.Millis(-time.Second) != 0 {
		t.Fatal("millis do not saturate")
	}
}

func TestAsProviderErrorKeepsTheWrappersMessage(t *testing.T) {
	err := fmt.Errorf("POST /v1/x: %w", capw.Retryable(capw.CodeConflict, "taken").After(time.Second))
	e := capw.AsProviderError(err)
	if e.Code != capw.CodeConflict || !e.Retryable || e.RetryAfter != time.Second || e.Message != "POST /v1/x: taken" {
		t.Fatalf("%+v", e)
	}
	e = capw.AsProviderError(errors.New("boom"))
	if e.Code != capw.CodeInternal || !e.Retryable || e.Message != "boom" {
		t.Fatalf("%+v", e)
	}
	_, err = capw.Secret("db")
	e = capw.AsProviderError(fmt.Errorf("reading: %w", err))
	if e.Code != capw.CodeNotGranted || e.Retryable || e.Message != "reading: secret `db`: not granted to this provider" {
		t.Fatalf("%+v", e)
	}
	if !errors.Is(err, capw.ErrSecretNotGranted) || errors.Is(err, capw.ErrSecretNotFound) {
		t.Fatal("errors.Is")
	}
}

func TestInProgressDefaultsAndBuilders(t *testing.T) {
	p := capw.NewInProgress("Booting", "instance booting")
	if p.RequeueAfter != 5*time.Second {
		t.Fatalf("%+v", p)
	}
	q := p.After(2 * time.Second).WithCondition(capw.Condition{Type: "Ready", Status: capw.ConditionFalse})
	if q.RequeueAfter != 2*time.Second || len(q.Conditions) != 1 || len(p.Conditions) != 0 {
		t.Fatalf("%+v", q)
	}
	if !capw.Deleted.Done() || capw.DeletionInProgress(p).Done() {
		t.Fatal("deletion")
	}
}

func TestNamesAreTheContracts(t *testing.T) {
	for got, want := range map[fmt.Stringer]string{
		capw.KubernetesVersion{Major: 1, Minor: 35, Patch: 2}: "v1.35.2",
		capw.RoleJoinControlPlane:                             "join-control-plane",
		capw.CodeQuotaExceeded:                                "quota-exceeded",
		capw.PointLifecycleHooks:                              "lifecycle-hooks",
		capw.PhaseProvisioning:                                "provisioning",
	} {
		if got.String() != want {
			t.Errorf("%v: %q", got, want)
		}
	}
}
