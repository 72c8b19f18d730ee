// Package config reads Paygate's configuration from the environment and provides its secrets.
package config

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/caarlos0/env/v11"

	"github.com/paygate/paygate/internal/money"
)

// Config is everything Paygate reads from its environment.
type Config struct {
	Env                string   `env:"PAYGATE_ENV" envDefault:"development"`
	Addr               string   `env:"PAYGATE_ADDR"`
	Port               string   `env:"PORT"`
	DatabaseURL        string   `env:"DATABASE_URL"`
	DBMaxConns         int      `env:"PAYGATE_DB_MAX_CONNS" envDefault:"20"`
	DataDir            string   `env:"PAYGATE_DATA_DIR" envDefault:".paygate"`
	JWTSecret          string   `env:"PAYGATE_JWT_SECRET"`
	CardFingerprintKey string   `env:"PAYGATE_CARD_FINGERPRINT_KEY"`
	APIKeySecret       string   `env:"PAYGATE_API_KEY_SECRET"`
	AdminEmail         string   `env:"PAYGATE_ADMIN_EMAIL"`
	AdminPassword      string   `env:"PAYGATE_ADMIN_PASSWORD"`
	CORSOrigins        []string `env:"PAYGATE_CORS_ORIGINS" envSeparator:","`
	// MetricsPublic serves /metrics to anyone, for a Prometheus on a private network that sends
	// no credentials.
	MetricsPublic  bool          `env:"PAYGATE_METRICS_PUBLIC" envDefault:"false"`
	MaxAmount      string        `env:"PAYGATE_MAX_AMOUNT" envDefault:"999999.99"`
	LogLevel       string        `env:"PAYGATE_LOG_LEVEL" envDefault:"info"`
	SandboxLatency time.Duration `env:"PAYGATE_SANDBOX_LATENCY" envDefault:"0s"`
	// SandboxOutage names the built-in sandboxes that answer every request 503, as a provider
	// that is down does, so that failover can be shown.
	SandboxOutage []string `env:"PAYGATE_SANDBOX_OUTAGE" envSeparator:","`

	// A provider without a base URL is served by its built-in sandbox.
	StripeBaseURL        string `env:"PAYGATE_STRIPE_BASE_URL"`
	StripeAPIKey         string `env:"PAYGATE_STRIPE_API_KEY"`
	AdyenBaseURL         string `env:"PAYGATE_ADYEN_BASE_URL"`
	AdyenAPIKey          string `env:"PAYGATE_ADYEN_API_KEY"`
	AdyenMerchantAccount string `env:"PAYGATE_ADYEN_MERCHANT_ACCOUNT"`
	CheckoutBaseURL      string `env:"PAYGATE_CHECKOUT_BASE_URL"`
	CheckoutAPIKey       string `env:"PAYGATE_CHECKOUT_API_KEY"`

	// Each provider's webhook secret: Stripe's endpoint signing secret (whsec_...), Adyen's HMAC
	// key (hex), Checkout.com's webhook secret key. A provider served by its sandbox without one
	// signs with a secret made at start.
	StripeWebhookSecret   string `env:"PAYGATE_STRIPE_WEBHOOK_SECRET"`
	AdyenWebhookSecret    string `env:"PAYGATE_ADYEN_WEBHOOK_SECRET"`
	CheckoutWebhookSecret string `env:"PAYGATE_CHECKOUT_WEBHOOK_SECRET"`
}

// ProviderAccess is how Paygate reaches one provider: its API's base URL ("" for the built-in
// sandbox) and credentials.
type ProviderAccess struct {
	BaseURL, APIKey, MerchantAccount string
	// WebhookSecret verifies the provider's webhooks.
	WebhookSecret string
}

// Providers gives each provider's access, by name.
func (c Config) Providers() map[string]ProviderAccess {
	return map[string]ProviderAccess{
		"stripe":   {BaseURL: c.StripeBaseURL, APIKey: c.StripeAPIKey, WebhookSecret: c.StripeWebhookSecret},
		"adyen":    {BaseURL: c.AdyenBaseURL, APIKey: c.AdyenAPIKey, MerchantAccount: c.AdyenMerchantAccount, WebhookSecret: c.AdyenWebhookSecret},
		"checkout": {BaseURL: c.CheckoutBaseURL, APIKey: c.CheckoutAPIKey, WebhookSecret: c.CheckoutWebhookSecret},
	}
}

// Load reads the configuration from environ (KEY=value strings, as os.Environ gives them).
func Load(environ []string) (Config, error) {
	vars := make(map[string]string, len(environ))
	for _, kv := range environ {
		if key, value, ok := strings.Cut(kv, "="); ok {
			vars[key] = value
		}
	}
	var cfg Config
	if err := env.ParseWithOptions(&cfg, env.Options{Environment: vars}); err != nil {
		return Config{}, err
	}
	if cfg.Env != "development" && cfg.Env != "production" {
		return Config{}, fmt.Errorf("PAYGATE_ENV must be development or production, not %q", cfg.Env)
	}
	if _, err := cfg.MaxAmountHundredths(); err != nil {
		return Config{}, err
	}
	for name, access := range cfg.Providers() {
		if err := access.check(name); err != nil {
			return Config{}, err
		}
	}
	for _, name := range cfg.SandboxOutage {
		if access, known := cfg.Providers()[name]; !known || access.BaseURL != "" {
			return Config{}, fmt.Errorf("PAYGATE_SANDBOX_OUTAGE: %q is not a provider served by its built-in sandbox", name)
		}
	}
	if (cfg.AdminEmail == "") != (cfg.AdminPassword == "") {
		return Config{}, errors.New("set both PAYGATE_ADMIN_EMAIL and PAYGATE_ADMIN_PASSWORD, or neither")
	}
	return cfg, nil
}

// check refuses a provider pointed at an address that is not an http(s) URL, or at its real API
// without the credentials it needs: better not to start than to fail every payment.
func (a ProviderAccess) check(name string) error {
	variable := "PAYGATE_" + strings.ToUpper(name)
	if name == "adyen" && a.WebhookSecret != "" {
		if key, err := hex.DecodeString(a.WebhookSecret); err != nil || len(key) < 16 {
			return errors.New("PAYGATE_ADYEN_WEBHOOK_SECRET must be the HMAC key as Adyen shows it: hex, at least 32 digits")
		}
	}
	if a.BaseURL == "" {
		return nil
	}
	u, err := url.Parse(a.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%s_BASE_URL must be an http or https URL", variable)
	}
	if a.APIKey == "" {
		return fmt.Errorf("%s_BASE_URL is set: set %s_API_KEY too", variable, variable)
	}
	if name == "adyen" && a.MerchantAccount == "" {
		return errors.New("PAYGATE_ADYEN_BASE_URL is set: set PAYGATE_ADYEN_MERCHANT_ACCOUNT too")
	}
	return nil
}

// Production reports whether Paygate runs in production mode.
func (c Config) Production() bool { return c.Env == "production" }

// ListenAddr is where the server listens: PAYGATE_ADDR, else :PORT, else 127.0.0.1:8080.
func (c Config) ListenAddr() string {
	switch {
	case c.Addr != "":
		return c.Addr
	case c.Port != "":
		return ":" + c.Port
	default:
		return "127.0.0.1:8080"
	}
}

// MaxAmountHundredths is the largest payment amount, in hundredths of a major unit.
func (c Config) MaxAmountHundredths() (int64, error) {
	limit, err := money.Parse(c.MaxAmount, "USD")
	if err != nil || limit.Minor <= 0 {
		return 0, fmt.Errorf("PAYGATE_MAX_AMOUNT must be a positive amount with at most two decimals, not %q", c.MaxAmount)
	}
	return limit.Minor, nil
}

// Secrets are the keys Paygate signs and hashes with.
type Secrets struct {
	JWT                []byte
	CardFingerprintKey []byte
	// APIKeySecret keys the hash API keys are stored as.
	APIKeySecret []byte
	// Generated lists the secrets that were missing and generated into the data dir.
	Generated []string
}

// LoadSecrets returns the configured secrets. In development a missing secret is read from, or
// generated into, the data dir (mode 0600); production refuses to start without them.
func (c Config) LoadSecrets() (Secrets, error) {
	var s Secrets
	for _, secret := range []struct {
		name, value, file string
		into              *[]byte
	}{
		{"PAYGATE_JWT_SECRET", c.JWTSecret, "jwt_secret", &s.JWT},
		{"PAYGATE_CARD_FINGERPRINT_KEY", c.CardFingerprintKey, "card_fingerprint_key", &s.CardFingerprintKey},
		{"PAYGATE_API_KEY_SECRET", c.APIKeySecret, "api_key_secret", &s.APIKeySecret},
	} {
		value := secret.value
		if value == "" {
			if c.Production() {
				return Secrets{}, fmt.Errorf("%s must be set in production", secret.name)
			}
			var generated bool
			var err error
			if value, generated, err = c.devSecret(secret.file); err != nil {
				return Secrets{}, fmt.Errorf("%s: %w", secret.name, err)
			}
			if generated {
				s.Generated = append(s.Generated, filepath.Join(c.DataDir, secret.file))
			}
		}
		if len(value) < 32 {
			return Secrets{}, fmt.Errorf("%s must be at least 32 bytes", secret.name)
		}
		*secret.into = []byte(value)
	}
	return s, nil
}

func (c Config) devSecret(file string) (value string, generated bool, err error) {
	path := filepath.Join(c.DataDir, file)
	content, err := os.ReadFile(path)
	if err == nil {
		return strings.TrimSpace(string(content)), false, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return "", false, err
	}
	if err := os.MkdirAll(c.DataDir, 0o700); err != nil {
		return "", false, err
	}
	raw := make([]byte, 32)
	rand.Read(raw)
	value = hex.EncodeToString(raw)
	// O_EXCL: when two servers start at once on one data dir, the second reads the first's secret.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return c.devSecret(file)
	}
	if err != nil {
		return "", false, err
	}
	defer f.Close()
	if _, err := f.WriteString(value + "\n"); err != nil {
		return "", false, err
	}
	return value, true, nil
}
