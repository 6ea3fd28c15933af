package siminfra

import (
	"strings"
	"testing"
	"time"

	"capw.dev/sdk/go/capw"
	"capw.dev/sdk/go/capwtest"
)

func providerError(status int, headers []capw.Header, code string) capw.ProviderError {
	r := &capw.Response{Status: status, Headers: headers,
		Body: []byte(`{"error": {"code": "` + code + `", "message": "said simcloud"}}`)}
	return capw.AsProviderError(apiError(r, requestName("POST", "/v1/instances?cluster=c1")))
}

func TestThrottlingIsRetryableAfterRetryAfter(t *testing.T) {
	e := providerError(429, []capw.Header{{Name: "retry-after", Value: "2"}}, "rate_limited")
	if e.Code != capw.CodeUnavailable || !e.Retryable || e.RetryAfter != 2*time.Second ||
		!strings.Contains(e.Message, "POST /v1/instances:") || strings.Contains(e.Message, "cluster=c1") ||
		!strings.Contains(e.Message, "rate_limited: said simcloud") {
		t.Fatalf("%+v", e)
	}
}

func TestStatusesAndCodesClassify(t *testing.T) {
	cases := []struct {
		status    int
		code      string
		want      capw.ErrorCode
		retryable bool
	}{
		{500, "internal", capw.CodeUnavailable, true},
		{401, "unauthorized", capw.CodeUnauthorized, false},
		{400, "invalid_request", capw.CodeInvalidInput, false},
		{404, "not_found", capw.CodeInvalidInput, false},
		{409, "conflict", capw.CodeConflict, true},
		{409, "failed_precondition", capw.CodeConflict, true},
		{409, "idempotency_mismatch", capw.CodeConflict, false},
		{409, "immutable_field", capw.CodeConflict, false},
	}
	for _, c := range cases {
		if e := providerError(c.status, nil, c.code); e.Code != c.want || e.Retryable != c.retryable {
			t.Errorf("%d %s: %+v", c.status, c.code, e)
		}
	}
	// A retry hint on a permanent error would contradict it.
	if e := providerError(409, []capw.Header{{Name: "retry-after", Value: "3"}}, "idempotency_mismatch"); e.Retryable || e.RetryAfter != 0 {
		t.Fatalf("%+v", e)
	}
}

func TestABodyThatIsNotSimcloudJSONIsQuotedShort(t *testing.T) {
	e := apiError(&capw.Response{Status: 502, Body: []byte(strings.Repeat("x", 1000))}, "GET /v1/zones")
	if !Is(e, 502, "http_502") || len(e.Error()) > 300 {
		t.Fatalf("%v", e)
	}
	if e := apiError(&capw.Response{Status: 502}, "GET /v1/zones"); !strings.Contains(e.Error(), "(no body)") {
		t.Fatalf("%v", e)
	}
}

func TestTimeoutsStopShortOfTheDeadline(t *testing.T) {
	five := 5 * time.Second
	if d, ok := RequestTimeout(five, time.Minute); !ok || d != five {
		t.Fatal(d)
	}
	if d, ok := RequestTimeout(five, 1200*time.Millisecond); !ok || d != time.Second {
		t.Fatal(d)
	}
	if _, ok := RequestTimeout(five, DeadlineMargin); ok {
		t.Fatal("no time left")
	}
}

func TestQueryValuesArePercentEncoded(t *testing.T) {
	if q := Query("cluster", "c1", "client_token", "a/b c&d=é"); q != "?cluster=c1&client_token=a%2Fb%20c%26d%3D%C3%A9" {
		t.Fatal(q)
	}
	if Query() != "" {
		t.Fatal("empty")
	}
}

func TestTheTokenComesFromTheGrantedSecret(t *testing.T) {
	ctx := capwtest.Context[Config](t, `{"endpoint": "http://127.0.0.1:1"}`)
	_, err := Provider{}.ReconcileCluster(ctx)
	if e := capw.AsProviderError(err); e.Code != capw.CodeNotGranted || e.Retryable || !strings.Contains(e.Message, "secret `simcloud-token`") {
		t.Fatalf("%+v", e)
	}
	capwtest.UseHost(t, &capwtest.Host{Secrets: map[string][]byte{"simcloud-token": nil}})
	if _, err := Connect(ctx); !capw.AsProviderError(err).Retryable {
		t.Fatalf("%v", err)
	}
	capwtest.UseHost(t, &capwtest.Host{Secrets: map[string][]byte{"simcloud-token": []byte(" \n")}})
	if e := capw.AsProviderError(func() error { _, err := Connect(ctx); return err }()); e.Code != capw.CodeInvalidInput {
		t.Fatalf("%+v", e)
	}
}
