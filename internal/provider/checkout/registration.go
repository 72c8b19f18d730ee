package checkout

import (
	"net/http"
	"time"

	"github.com/paygate/paygate/ent"
	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/provider/checkout/sandbox"
)

// Keys of Checkout.com's settings.
const (
	apiKey        = "API_KEY"
	webhookSecret = "WEBHOOK_SECRET"
)

// Registration is all Paygate needs of Checkout.com.
var Registration = provider.Registration{
	Name: Name,
	Variables: []provider.Variable{
		{Key: provider.BaseURLKey, Help: "Checkout.com's API (sandbox: https://api.sandbox.checkout.com); unset: the built-in sandbox"},
		{Key: apiKey, Help: "Checkout.com's secret key"},
		{Key: webhookSecret, Help: "Checkout.com's webhook secret key"},
	},
	Check: func(s provider.Settings) error { return provider.CheckAPI(Name, s, apiKey) },
	NewClient: func(s provider.Settings, caller provider.Caller) provider.Provider {
		return &Client{BaseURL: s.BaseURL(), SecretKey: s[apiKey], Caller: caller}
	},
	SandboxSettings: func(configured provider.Settings) provider.Settings {
		return provider.Settings{apiKey: "sandbox", webhookSecret: provider.SandboxSecret(configured, webhookSecret)}
	},
	NewSandbox: func(db *ent.Client, s provider.Settings, now func() time.Time, pages string) provider.Sandbox {
		secret := s[webhookSecret]
		return sandbox.New(db, now, func(body []byte, _ time.Time) http.Header {
			return http.Header{signatureHeader: {Sign(secret, body)}}
		}, pages, counting)
	},
	NewVerifier: func(s provider.Settings, _ func() time.Time) (provider.WebhookVerifier, error) {
		if s[webhookSecret] == "" {
			return nil, provider.NotConfigured(Name, webhookSecret)
		}
		return verifier{secret: s[webhookSecret]}, nil
	},
	ReadNotification: ReadNotification,
	Simulations: map[string]provider.Simulation{
		"payment_refunded": provider.SimulateRefund,
		"dispute_received": provider.SimulateDispute,
		"payment_declined": provider.SimulateLateFailure,
	},
	Currencies: []string{"GBP"},
}
