package adyen

import (
	"encoding/hex"
	"errors"
	"time"

	"github.com/paygate/paygate/ent"
	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/provider/adyen/sandbox"
)

// Keys of Adyen's settings.
const (
	apiKey          = "API_KEY"
	merchantAccount = "MERCHANT_ACCOUNT"
	webhookSecret   = "WEBHOOK_SECRET"
)

// Registration is all Paygate needs of Adyen.
var Registration = provider.Registration{
	Name: Name,
	Variables: []provider.Variable{
		{Key: provider.BaseURLKey, Help: "Adyen's Checkout API (test: https://checkout-test.adyen.com); unset: the built-in sandbox"},
		{Key: apiKey, Help: "Adyen's API key"},
		{Key: merchantAccount, Help: "Adyen's merchant account"},
		{Key: webhookSecret, Help: "Adyen's webhook HMAC key, in hex as Adyen shows it"},
	},
	Check: check,
	NewClient: func(s provider.Settings, caller provider.Caller) provider.Provider {
		return &Client{BaseURL: s.BaseURL(), APIKey: s[apiKey], MerchantAccount: s[merchantAccount], Caller: caller}
	},
	SandboxSettings: func(configured provider.Settings) provider.Settings {
		return provider.Settings{apiKey: "sandbox", merchantAccount: "PaygateSandbox", webhookSecret: provider.SandboxSecret(configured, webhookSecret)}
	},
	NewSandbox: func(db *ent.Client, s provider.Settings, now func() time.Time, pages string) provider.Sandbox {
		key := s[webhookSecret]
		return sandbox.New(db, now, func(item []byte) (string, error) { return SignItem(key, item) }, pages)
	},
	NewVerifier: func(s provider.Settings, _ func() time.Time) (provider.WebhookVerifier, error) {
		if s[webhookSecret] == "" {
			return nil, provider.NotConfigured(Name, webhookSecret)
		}
		key, err := hex.DecodeString(s[webhookSecret])
		if err != nil {
			return nil, err // refused by check
		}
		return verifier{key: key}, nil
	},
	Acknowledgement:  "[accepted]",
	ReadNotification: ReadNotification,
	Simulations: map[string]provider.Simulation{
		"REFUND":       provider.SimulateRefund,
		"CHARGEBACK":   provider.SimulateDispute,
		"CANCELLATION": provider.SimulateLateFailure,
	},
	Currencies: []string{"EUR"},
}

// check refuses an HMAC key that is not Adyen's shape, and the real API without the API key and
// the merchant account every request names.
func check(s provider.Settings) error {
	if secret := s[webhookSecret]; secret != "" {
		if key, err := hex.DecodeString(secret); err != nil || len(key) < 16 {
			return errors.New(provider.VariableName(Name, webhookSecret) + " must be the HMAC key as Adyen shows it: hex, at least 32 digits")
		}
	}
	return provider.CheckAPI(Name, s, apiKey, merchantAccount)
}
