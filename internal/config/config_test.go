package config

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/provider/adyen"
	"github.com/paygate/paygate/internal/provider/checkout"
	"github.com/paygate/paygate/internal/provider/stripe"
)

func TestListenAddr(t *testing.T) {
	tests := []struct {
		environ []string
		want    string
	}{
		{nil, "127.0.0.1:8080"},
		{[]string{"PORT=9000"}, ":9000"},
		{[]string{"PORT=9000", "PAYGATE_ADDR=0.0.0.0:7000"}, "0.0.0.0:7000"},
	}
	for _, tt := range tests {
		cfg, err := Load(tt.environ, registered)
		if err != nil {
			t.Fatal(err)
		}
		if got := cfg.ListenAddr(); got != tt.want {
			t.Errorf("%v: ListenAddr = %s, want %s", tt.environ, got, tt.want)
		}
	}
}

func TestLoadRefusesBadSettings(t *testing.T) {
	for _, environ := range [][]string{
		{"PAYGATE_ENV=prod"},
		{"PAYGATE_MAX_AMOUNT=ten"},
		{"PAYGATE_MAX_AMOUNT=0"},
		{"PAYGATE_MAX_AMOUNT=1.001"},
		{"PAYGATE_ADMIN_EMAIL=a@example.com"},
		{"PAYGATE_DB_MAX_CONNS=many"},
		{"PAYGATE_STRIPE_BASE_URL=https://api.stripe.com"}, // no key
		{"PAYGATE_STRIPE_BASE_URL=ftp://api.stripe.com", "PAYGATE_STRIPE_API_KEY=sk_test_x"},    // not http(s)
		{"PAYGATE_ADYEN_BASE_URL=https://checkout-test.adyen.com", "PAYGATE_ADYEN_API_KEY=AQE"}, // no merchant account
		{"PAYGATE_SANDBOX_OUTAGE=paypal"},
		{"PAYGATE_SANDBOX_OUTAGE=stripe", "PAYGATE_STRIPE_BASE_URL=https://api.stripe.com", "PAYGATE_STRIPE_API_KEY=sk_test_x"},
	} {
		if _, err := Load(environ, registered); err == nil {
			t.Errorf("Load(%v) succeeded", environ)
		}
	}
	cfg, err := Load([]string{"PAYGATE_MAX_AMOUNT=5000", "PAYGATE_CORS_ORIGINS=https://a.example,https://b.example"}, registered)
	if err != nil {
		t.Fatal(err)
	}
	if limit, _ := cfg.MaxAmountHundredths(); limit != 500000 {
		t.Errorf("max amount = %d hundredths, want 500000", limit)
	}
	if len(cfg.CORSOrigins) != 2 {
		t.Errorf("CORS origins = %v", cfg.CORSOrigins)
	}
	cfg, err = Load([]string{"PAYGATE_ADYEN_BASE_URL=https://checkout-test.adyen.com", "PAYGATE_ADYEN_API_KEY=AQE",
		"PAYGATE_ADYEN_MERCHANT_ACCOUNT=Shop", "PAYGATE_SANDBOX_OUTAGE=stripe,checkout"}, registered)
	if err != nil {
		t.Fatal(err)
	}
	if a := cfg.Providers["adyen"]; a.BaseURL() == "" || a["MERCHANT_ACCOUNT"] != "Shop" || len(cfg.SandboxOutage) != 2 {
		t.Errorf("providers %+v, outage %v", cfg.Providers, cfg.SandboxOutage)
	}
}

func TestSecrets(t *testing.T) {
	dir := t.TempDir()
	cfg, _ := Load([]string{"PAYGATE_DATA_DIR=" + dir}, registered)
	first, err := cfg.LoadSecrets()
	if err != nil || len(first.Generated) != 3 || len(first.JWT) < 32 || len(first.CardFingerprintKey) < 32 || len(first.APIKeySecret) < 32 {
		t.Fatalf("generated secrets = %+v, %v", first, err)
	}
	again, err := cfg.LoadSecrets()
	if err != nil || len(again.Generated) != 0 || string(again.JWT) != string(first.JWT) {
		t.Errorf("secrets were not kept: %+v, %v", again, err)
	}
	info, err := os.Stat(filepath.Join(dir, "jwt_secret"))
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("jwt_secret mode = %v, %v", info, err)
	}

	given := strings.Repeat("k", 32)
	cfg, _ = Load([]string{"PAYGATE_ENV=production", "PAYGATE_PUBLIC_URL=https://pay.example.com", "PAYGATE_JWT_SECRET=" + given, "PAYGATE_CARD_FINGERPRINT_KEY=" + given, "PAYGATE_API_KEY_SECRET=" + given}, registered)
	if s, err := cfg.LoadSecrets(); err != nil || string(s.JWT) != given || string(s.APIKeySecret) != given {
		t.Errorf("configured secrets = %+v, %v", s, err)
	}
	for _, environ := range [][]string{
		{"PAYGATE_ENV=production", "PAYGATE_PUBLIC_URL=https://pay.example.com", "PAYGATE_JWT_SECRET=" + given},
		{"PAYGATE_ENV=production", "PAYGATE_PUBLIC_URL=https://pay.example.com", "PAYGATE_JWT_SECRET=" + given, "PAYGATE_CARD_FINGERPRINT_KEY=" + given},
		{"PAYGATE_JWT_SECRET=short", "PAYGATE_DATA_DIR=" + dir},
	} {
		cfg, _ = Load(environ, registered)
		if _, err := cfg.LoadSecrets(); err == nil {
			t.Errorf("LoadSecrets with %v succeeded", environ)
		}
	}
}

// TestCORSOrigins: an origin is taken as browsers send it, whatever trailing slash or case it
// was written with; anything that is not an origin is refused at start.
func TestCORSOrigins(t *testing.T) {
	cfg, err := Load([]string{"PAYGATE_CORS_ORIGINS=https://Dash.example.com/, http://localhost:3000"}, registered)
	if err != nil || len(cfg.CORSOrigins) != 2 || cfg.CORSOrigins[0] != "https://dash.example.com" || cfg.CORSOrigins[1] != "http://localhost:3000" {
		t.Errorf("origins = %q, %v", cfg.CORSOrigins, err)
	}
	for _, bad := range []string{"dash.example.com", "https://dash.example.com/app", "ftp://example.com", "https://", "*"} {
		if _, err := Load([]string{"PAYGATE_CORS_ORIGINS=" + bad}, registered); err == nil || !strings.Contains(err.Error(), "PAYGATE_CORS_ORIGINS") {
			t.Errorf("origin %q = %v", bad, err)
		}
	}
}

// TestEveryVariableIsExplained: the commands' help says what each variable is for, and each
// variable is in one of the groups the commands name.
func TestEveryVariableIsExplained(t *testing.T) {
	for _, field := range reflect.VisibleFields(reflect.TypeFor[Config]()) {
		if field.Tag.Get("env") != "" && field.Tag.Get("help") == "" {
			t.Errorf("%s has no help", field.Tag.Get("env"))
		}
		if field.Tag.Get("env") != "" && !slices.Contains(Groups(), Group(field.Tag.Get("group"))) {
			t.Errorf("%s is in no group of %v: group %q", field.Tag.Get("env"), Groups(), field.Tag.Get("group"))
		}
	}
}

// TestVariables: a group gives its variables and no others; variables that are not Config's
// are described as Config's are.
func TestVariables(t *testing.T) {
	var names []string
	for _, v := range Variables(GroupDatabase, GroupLog) {
		names = append(names, v.Name)
	}
	if want := []string{"DATABASE_URL", "PAYGATE_DB_MAX_CONNS", "PAYGATE_LOG_LEVEL"}; !slices.Equal(names, want) {
		t.Errorf("database and log variables = %v, want %v", names, want)
	}
	all := 0
	for _, field := range reflect.VisibleFields(reflect.TypeFor[Config]()) {
		if field.Tag.Get("env") != "" {
			all++
		}
	}
	if got := len(Variables(Groups()...)); got != all {
		t.Errorf("every group has %d variables, Config %d", got, all)
	}
	var providerNames []string
	for _, v := range ProviderVariables(registered) {
		providerNames = append(providerNames, v.Name)
	}
	if len(providerNames) != 10 || !slices.Contains(providerNames, "PAYGATE_ADYEN_MERCHANT_ACCOUNT") || providerNames[0] != "PAYGATE_STRIPE_BASE_URL" {
		t.Errorf("the providers' variables = %v", providerNames)
	}
	described := Describe(append(Variables(GroupLog), Variable{Name: "PAYGATE_EXTRA", Help: "an extra", Default: "x"})...)
	for _, want := range []string{"PAYGATE_LOG_LEVEL", "debug, info, warn or error (default info)", "PAYGATE_EXTRA", "an extra (default x)"} {
		if !strings.Contains(described, want) {
			t.Errorf("described variables say no %q:\n%s", want, described)
		}
	}
	if strings.Count(described, "\n") != 2 {
		t.Errorf("described variables are not one a line:\n%s", described)
	}
}

// registered are the providers Paygate registers.
var registered = []provider.Registration{stripe.Registration, adyen.Registration, checkout.Registration}

// TestPublicURL: where browsers reach Paygate is PAYGATE_PUBLIC_URL, without its trailing slash,
// else the listen address; it must be an http(s) URL, and production requires it.
func TestPublicURL(t *testing.T) {
	for _, tc := range []struct {
		environ []string
		want    string
	}{
		{nil, "http://127.0.0.1:8080"},
		{[]string{"PORT=9000"}, "http://localhost:9000"},
		{[]string{"PAYGATE_PUBLIC_URL=https://pay.example.com/"}, "https://pay.example.com"},
		{[]string{"PAYGATE_PUBLIC_URL=https://example.com/pay"}, "https://example.com/pay"},
	} {
		cfg, err := Load(tc.environ, registered)
		if err != nil || cfg.PublicAddress() != tc.want {
			t.Errorf("%v: public address %q, %v; want %q", tc.environ, cfg.PublicAddress(), err, tc.want)
		}
	}
	for _, environ := range [][]string{
		{"PAYGATE_PUBLIC_URL=ftp://pay.example.com"},
		{"PAYGATE_PUBLIC_URL=https://pay.example.com/?x=1"},
		{"PAYGATE_PUBLIC_URL=pay.example.com"},
		{"PAYGATE_ENV=production"},
	} {
		if _, err := Load(environ, registered); err == nil || !strings.Contains(err.Error(), "PAYGATE_PUBLIC_URL") {
			t.Errorf("%v: %v; want PAYGATE_PUBLIC_URL refused", environ, err)
		}
	}
}

// TestProductionAllows: each item is KIND:PROVIDER, read in any case and spacing; an item of
// another kind or naming no provider is refused, named, in development too.
func TestProductionAllows(t *testing.T) {
	cfg, err := Load([]string{"PAYGATE_PRODUCTION_ALLOWS= sandbox:stripe, No-Webhooks:Adyen,,"}, registered)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"sandbox:stripe", "no-webhooks:adyen"}; !slices.Equal(cfg.ProductionAllows, want) {
		t.Errorf("allowances %q, want %q", cfg.ProductionAllows, want)
	}
	if !cfg.Allows(AllowSandbox, "stripe") || !cfg.Allows(AllowNoWebhooks, "adyen") || cfg.Allows(AllowSandbox, "adyen") || cfg.Allows(AllowNoWebhooks, "stripe") {
		t.Errorf("allowances %q read wrong", cfg.ProductionAllows)
	}
	for item, want := range map[string]string{
		"sandbox:paypal":      `"sandbox:paypal" names no provider; the providers are stripe, adyen, checkout`,
		"sandbox":             `"sandbox" names no provider`,
		"unsigned:stripe":     `"unsigned:stripe" is not an allowance; write sandbox:PROVIDER or no-webhooks:PROVIDER`,
		"stripe":              `"stripe" is not an allowance`,
		"sandbox:stripe:live": `"sandbox:stripe:live" names no provider`,
	} {
		for _, environ := range [][]string{{"PAYGATE_PRODUCTION_ALLOWS=" + item}, {"PAYGATE_ENV=production", "PAYGATE_PUBLIC_URL=https://pay.example.com", "PAYGATE_PRODUCTION_ALLOWS=sandbox:stripe," + item}} {
			if _, err := Load(environ, registered); err == nil || !strings.Contains(err.Error(), "PAYGATE_PRODUCTION_ALLOWS: "+want) {
				t.Errorf("%v: %v, want %s", environ, err, want)
			}
		}
	}
}

// TestDebugAddr: the profiles are served on a loopback address only; any other, or one without a
// port, is refused at start.
func TestDebugAddr(t *testing.T) {
	for _, addr := range []string{"127.0.0.1:6060", "127.0.0.2:6060", "[::1]:6060", "localhost:6060", "127.0.0.1:0"} {
		cfg, err := Load([]string{"PAYGATE_DEBUG_ADDR=" + addr}, registered)
		if err != nil || cfg.DebugAddr != addr {
			t.Errorf("PAYGATE_DEBUG_ADDR=%s: %q, %v", addr, cfg.DebugAddr, err)
		}
	}
	for _, addr := range []string{"0.0.0.0:6060", ":6060", "[::]:6060", "203.0.113.7:6060", "10.0.0.1:6060", "127.0.0.1",
		"localhost", "127.0.0.1:http", "127.0.0.1:70000", "debug.example.com:6060", "[::ffff:0.0.0.0]:6060"} {
		_, err := Load([]string{"PAYGATE_DEBUG_ADDR=" + addr}, registered)
		if err == nil || !strings.Contains(err.Error(), "PAYGATE_DEBUG_ADDR") {
			t.Errorf("PAYGATE_DEBUG_ADDR=%s: %v, want an error naming the variable", addr, err)
		}
	}
}
