package app

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/paygate/paygate/internal/config"
	"github.com/paygate/paygate/internal/database"
	"github.com/paygate/paygate/internal/inbound"
	"github.com/paygate/paygate/internal/outbound"
	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/provider/adyen"
	"github.com/paygate/paygate/internal/provider/checkout"
	"github.com/paygate/paygate/internal/provider/stripe"
)

// providerRetryWaits are the pauses before resending a provider request whose outcome is in
// doubt, with its idempotency key.
var providerRetryWaits = []time.Duration{100 * time.Millisecond, 400 * time.Millisecond}

// sandboxes are the built-in sandboxes in use, by provider: their switches, to make them fail or
// slow down, and those that settle refunds some time after taking them.
type sandboxes struct {
	switches map[string]*provider.SandboxSwitches
	settlers map[string]provider.Settler
	webhooks map[string]webhookSandbox
}

// webhookSandbox is a sandbox that sends its provider's webhooks, and brings about on demand the
// events that happen at a provider outside Paygate's requests.
type webhookSandbox interface {
	SendWebhooks(ctx context.Context, config outbound.WebhookConfig) error
	Simulate(ctx context.Context, kind provider.Simulation, paymentReference string) error
}

// newProviders returns the three adapters, each speaking to its provider's API at the configured
// base URL, or to its built-in sandbox, served in process over Paygate's database.
func newProviders(cfg config.Config, db *database.DB, now func() time.Time) ([]provider.Provider, sandboxes) {
	access := cfg.Providers()
	inUse := sandboxes{switches: map[string]*provider.SandboxSwitches{}, settlers: map[string]provider.Settler{}, webhooks: map[string]webhookSandbox{}}
	// Real providers share one pool of kept-alive connections, sized for concurrent payments.
	network := &http.Client{Transport: &http.Transport{
		Proxy: http.ProxyFromEnvironment, MaxIdleConns: 256, MaxIdleConnsPerHost: 64,
		IdleConnTimeout: 90 * time.Second, TLSHandshakeTimeout: 10 * time.Second, ForceAttemptHTTP2: true,
	}}
	// caller returns how to reach the provider name: its API, or the sandbox h, whose base URL
	// and key then stand in for the real ones.
	caller := func(name string, sandbox http.Handler, s *provider.SandboxSwitches) (baseURL, apiKey string, c provider.Caller) {
		a := access[name]
		if a.BaseURL != "" {
			return a.BaseURL, a.APIKey, provider.Caller{HTTP: network, RetryWaits: providerRetryWaits}
		}
		s.Latency.Store(int64(cfg.SandboxLatency))
		s.Outage.Store(slices.Contains(cfg.SandboxOutage, name))
		inUse.switches[name] = s
		if settler, ok := sandbox.(provider.Settler); ok {
			inUse.settlers[name] = settler
		}
		if sender, ok := sandbox.(webhookSandbox); ok {
			inUse.webhooks[name] = sender
		}
		return "http://" + name + ".sandbox", "sandbox", provider.Caller{HTTP: &http.Client{Transport: provider.InProcess{Handler: sandbox}}, RetryWaits: providerRetryWaits}
	}

	stripeSandbox := stripe.NewSandbox(db.Ent, now)
	stripeURL, stripeKey, stripeCaller := caller(stripe.Name, stripeSandbox, &stripeSandbox.SandboxSwitches)
	adyenSandbox := adyen.NewSandbox(db.Ent, now)
	adyenURL, adyenKey, adyenCaller := caller(adyen.Name, adyenSandbox, &adyenSandbox.SandboxSwitches)
	merchantAccount := access[adyen.Name].MerchantAccount
	if access[adyen.Name].BaseURL == "" {
		merchantAccount = "PaygateSandbox"
	}
	checkoutSandbox := checkout.NewSandbox(db.Ent, now)
	checkoutURL, checkoutKey, checkoutCaller := caller(checkout.Name, checkoutSandbox, &checkoutSandbox.SandboxSwitches)
	return []provider.Provider{
		&stripe.Client{BaseURL: stripeURL, APIKey: stripeKey, Caller: stripeCaller},
		&adyen.Client{BaseURL: adyenURL, APIKey: adyenKey, MerchantAccount: merchantAccount, Caller: adyenCaller},
		&checkout.Client{BaseURL: checkoutURL, SecretKey: checkoutKey, Caller: checkoutCaller},
	}, inUse
}

// webhookSecrets returns each provider's webhook secret: the configured one, or for a provider
// served by its sandbox, one made now, which that sandbox signs with. A real provider without one
// has its webhooks refused, which is logged.
func webhookSecrets(cfg config.Config, inUse sandboxes, logger *slog.Logger) map[string]string {
	secrets := map[string]string{}
	for name, access := range cfg.Providers() {
		secret := access.WebhookSecret
		if _, sandboxed := inUse.webhooks[name]; secret == "" && sandboxed {
			key := make([]byte, 32) // hex, as Adyen's HMAC key is written, and as good for the others
			rand.Read(key)
			secret = hex.EncodeToString(key)
		}
		if secret == "" {
			logger.Warn("webhooks from this provider are refused until its webhook secret is set",
				"provider", name, "variable", "PAYGATE_"+strings.ToUpper(name)+"_WEBHOOK_SECRET")
			continue
		}
		secrets[name] = secret
	}
	return secrets
}

// simulators are the sandboxes in use, as what brings about events on demand.
func (s sandboxes) simulators() map[string]inbound.Simulating {
	simulators := map[string]inbound.Simulating{}
	for name, sandbox := range s.webhooks {
		simulators[name] = sandbox
	}
	return simulators
}
