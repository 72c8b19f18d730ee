package stripe

import (
	"net/http"
	"time"

	"github.com/paygate/paygate/ent"
	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/provider/stripe/sandbox"
)

// Keys of Stripe's settings.
const (
	apiKey        = "API_KEY"
	webhookSecret = "WEBHOOK_SECRET"
)

// Registration is all Paygate needs of Stripe.
var Registration = provider.Registration{
	Name: Name,
	Variables: []provider.Variable{
		{Key: provider.BaseURLKey, Help: "Stripe's API (https://api.stripe.com); unset: the built-in sandbox"},
		{Key: apiKey, Help: "Stripe's secret key"},
		{Key: webhookSecret, Help: "Stripe's endpoint signing secret (whsec_...)"},
	},
	Check: func(s provider.Settings) error { return provider.CheckAPI(Name, s, apiKey) },
	NewClient: func(s provider.Settings, caller provider.Caller) provider.Provider {
		return &Client{BaseURL: s.BaseURL(), APIKey: s[apiKey], Caller: caller}
	},
	SandboxSettings: func(configured provider.Settings) provider.Settings {
		return provider.Settings{apiKey: "sandbox", webhookSecret: provider.SandboxSecret(configured, webhookSecret)}
	},
	NewSandbox: func(db *ent.Client, s provider.Settings, now func() time.Time, pages string) provider.Sandbox {
		secret := s[webhookSecret]
		return sandbox.New(db, now, func(body []byte, at time.Time) http.Header {
			return http.Header{signatureHeader: {Sign(secret, body, at)}}
		}, pages, counting)
	},
	NewVerifier: func(s provider.Settings, now func() time.Time) (provider.WebhookVerifier, error) {
		if s[webhookSecret] == "" {
			return nil, provider.NotConfigured(Name, webhookSecret)
		}
		return verifier{secret: s[webhookSecret], now: now}, nil
	},
	ReadNotification: ReadNotification,
	Simulations: map[string]provider.Simulation{
		"charge.refunded":               provider.SimulateRefund,
		"charge.dispute.created":        provider.SimulateDispute,
		"payment_intent.payment_failed": provider.SimulateLateFailure,
	},
}
