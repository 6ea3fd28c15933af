package main

import (
	"testing"

	"capw.dev/sdk/go/capw"
	"capw.dev/sdk/go/capwtest"
)

func handle(t *testing.T, config string, hook capw.Hook) capw.HookResponse {
	t.Helper()
	ctx := capwtest.Context[Config](t, config)
	response, err := Provider{}.Handle(ctx, capw.HookRequest{Hook: hook, ToVersion: capwtest.Version(35)})
	if err != nil {
		t.Fatal(err)
	}
	return response
}

func TestAProtectedClusterIsHeldAtDeletionOnly(t *testing.T) {
	held := handle(t, `{"protectFromDelete": true}`, capw.BeforeClusterDelete)
	if held.Hold == nil || held.Hold.Reason != "DeletionProtected" {
		t.Errorf("deletion: %+v", held)
	}
	if create := handle(t, `{"protectFromDelete": true}`, capw.BeforeClusterCreate); create.Hold != nil {
		t.Errorf("creation held: %+v", create.Hold)
	}
}

func TestAnUnprotectedClusterIsDeleted(t *testing.T) {
	if answer := handle(t, `{}`, capw.BeforeClusterDelete); answer.Hold != nil {
		t.Errorf("held: %+v", answer.Hold)
	}
}

func TestProtectFromDeleteIsABoolean(t *testing.T) {
	errors := capwtest.AssertRefusedAt[Config](t, Provider{}, `{"protectFromDelete": "yes"}`, "/protectFromDelete")
	capwtest.AssertFieldError(t, errors, "/protectFromDelete", "boolean")
}
