package capw_test

import (
	"strings"
	"testing"
	"time"

	"capw.dev/sdk/go/capw"
	"capw.dev/sdk/go/capwtest"
)

func TestRequestsGoToTheHostSplitAndWithALength(t *testing.T) {
	h := capwtest.UseHost(t, &capwtest.Host{HTTP: func(r capwtest.SentRequest) (capw.Response, *capw.HTTPError) {
		return capwtest.JSON(201, `{"ok": true}`), nil
	}})
	r, err := capw.NewRequest("post", "HTTPS://api.cloud.test:8443/v1/x?y=1#frag").
		WithHeader("content-type", "application/json").WithBody([]byte(`{}`)).Send()
	if err != nil || r.Status != 201 || r.Header("Content-Type") != "application/json" {
		t.Fatalf("%+v %v", r, err)
	}
	sent := h.Sent()[0]
	if sent.Method != "POST" || sent.URL != "https://api.cloud.test:8443/v1/x?y=1" || sent.Header("content-length") != "2" {
		t.Fatalf("%+v", sent)
	}
}

func TestURLsThatCannotBeSentAreRefusedBeforeTheHost(t *testing.T) {
	h := capwtest.UseHost(t, &capwtest.Host{})
	for _, url := range []string{"host/x", "ftp://host/", "https:///x", "https://user@host/", "https://host/a b"} {
		_, err := capw.NewRequest("GET", url).Send()
		he, ok := err.(*capw.HTTPError)
		if !ok || he.Kind != capw.HTTPInvalidURL {
			t.Errorf("%s: %v", url, err)
		}
	}
	if len(h.Sent()) != 0 {
		t.Fatal("sent")
	}
}

func TestTransportFailuresMeanWhatTheSDKSays(t *testing.T) {
	_, err := capw.NewRequest("GET", "http://localhost/").Send()
	if e := capw.AsProviderError(err); e.Code != capw.CodeInternal || !e.Retryable {
		t.Fatalf("native: %+v", e)
	}
	capwtest.UseHost(t, &capwtest.Host{})
	_, err = capw.NewRequest("GET", "http://evil.test/").Send()
	if e := capw.AsProviderError(err); e.Code != capw.CodeNotGranted || e.Retryable || !strings.Contains(e.Message, "evil.test") {
		t.Fatalf("denied: %+v", e)
	}
}

func TestStatusesMapToErrors(t *testing.T) {
	code := func(status int, headers ...capw.Header) *capw.ProviderError {
		return (&capw.Response{Status: status, Headers: headers}).ErrorForStatus()
	}
	if code(200) != nil {
		t.Fatal("200")
	}
	for status, want := range map[int]capw.ErrorCode{403: capw.CodeUnauthorized, 409: capw.CodeConflict,
		404: capw.CodeInvalidInput, 502: capw.CodeUnavailable, 429: capw.CodeUnavailable} {
		if e := code(status); e.Code != want {
			t.Errorf("%d: %+v", status, e)
		}
	}
	e := code(429, capw.Header{Name: "Retry-After", Value: " 7 "})
	if !e.Retryable || e.RetryAfter != 7*time.Second {
		t.Fatalf("%+v", e)
	}
	if e := code(503, capw.Header{Name: "retry-after", Value: "Wed, 21 Oct 2015 07:28:00 GMT"}); e.RetryAfter != 0 {
		t.Fatalf("%+v", e)
	}
}

func TestLogsAndSecretsGoToTheHost(t *testing.T) {
	h := capwtest.UseHost(t, &capwtest.Host{Secrets: map[string][]byte{"token": []byte("t"), "later": nil}})
	capw.Log.Info("created", "cluster", "c1", "odd")
	logs := h.Logs()
	if len(logs) != 1 || logs[0].Level != "info" || logs[0].Fields[0] != [2]string{"cluster", "c1"} || logs[0].Fields[1] != [2]string{"odd", ""} {
		t.Fatalf("%+v", logs)
	}
	if v, err := capw.Secret("token"); err != nil || string(v) != "t" {
		t.Fatalf("%q %v", v, err)
	}
	if _, err := capw.Secret("later"); !capw.AsProviderError(err).Retryable {
		t.Fatalf("%v", err)
	}
}
