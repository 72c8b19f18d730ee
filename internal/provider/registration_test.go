package provider

import (
	"encoding/hex"
	"strings"
	"testing"
)

// TestCheckAPI: the sandbox needs nothing; the real API needs an http(s) base URL and the
// settings named, and the error names the variable to set.
func TestCheckAPI(t *testing.T) {
	if err := CheckAPI("acme", Settings{}, "API_KEY"); err != nil {
		t.Errorf("the sandbox: %v", err)
	}
	if err := CheckAPI("acme", Settings{BaseURLKey: "https://api.acme.test", "API_KEY": "k"}, "API_KEY"); err != nil {
		t.Errorf("the real API with its key: %v", err)
	}
	for settings, want := range map[*Settings]string{
		{BaseURLKey: "ftp://api.acme.test", "API_KEY": "k"}: "PAYGATE_ACME_BASE_URL must be an http or https URL",
		{BaseURLKey: "https://api.acme.test"}:               "set PAYGATE_ACME_API_KEY too",
	} {
		if err := CheckAPI("acme", *settings, "API_KEY"); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%v: %v, want %q", *settings, err, want)
		}
	}
}

// TestSandboxSecret: a configured secret stands; without one, each sandbox gets a new 32-byte
// hex secret.
func TestSandboxSecret(t *testing.T) {
	if got := SandboxSecret(Settings{"WEBHOOK_SECRET": "whsec_x"}, "WEBHOOK_SECRET"); got != "whsec_x" {
		t.Errorf("configured secret = %q", got)
	}
	first, second := SandboxSecret(Settings{}, "WEBHOOK_SECRET"), SandboxSecret(nil, "WEBHOOK_SECRET")
	if key, err := hex.DecodeString(first); err != nil || len(key) != 32 || first == second {
		t.Errorf("made secrets %q and %q", first, second)
	}
}
