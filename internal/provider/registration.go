package provider

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/paygate/paygate/ent"
	"github.com/paygate/paygate/internal/outbound"
)

// Registration is everything Paygate needs of one provider. Each provider's package exports one,
// and the application lists them: the router, the webhook inbox, the configuration, the
// simulator, the metrics and the API documents all take their providers from that list.
type Registration struct {
	// Name is the provider in Paygate: on payments, in routing rules, in /webhooks/{name}, and in
	// its variables' names (PAYGATE_{NAME}_...).
	Name string
	// Variables are its settings, each read from PAYGATE_{NAME}_{KEY}. Every provider has
	// BASE_URL, its API's address; unset, the built-in sandbox serves instead.
	Variables []Variable
	// Check refuses settings the provider cannot work with, naming the variable to fix.
	Check func(s Settings) error
	// NewClient builds the adapter that speaks to the provider's API at s's base URL, through
	// caller.
	NewClient func(s Settings, caller Caller) Provider
	// SandboxSettings are the settings the built-in sandbox runs with, given those configured: a
	// webhook secret made now when none is, and whatever account the sandbox names itself by.
	SandboxSettings func(configured Settings) Settings
	// NewSandbox builds the built-in sandbox, which keeps its state in Paygate's database and
	// signs its webhooks as the provider does, with s's secret. pages is the absolute address
	// (no trailing slash) at which the shopper's browser reaches the sandbox's pages: its
	// authentication challenge is pages + "/challenge/{id}".
	NewSandbox func(db *ent.Client, s Settings, now func() time.Time, pages string) Sandbox
	// NewVerifier builds what checks the provider's webhook deliveries under s, or fails with
	// ErrWebhooksNotConfigured when s lacks what that takes.
	NewVerifier func(s Settings, now func() time.Time) (WebhookVerifier, error)
	// Acknowledgement is the body the provider expects back from a webhook it delivered ("" for
	// none).
	Acknowledgement string
	// ReadNotification reads one verified event (its type and payload) into what it says.
	ReadNotification func(eventType string, payload []byte) (Notification, error)
	// Simulations are the provider's own names for the events its sandbox can be made to send.
	Simulations map[string]Simulation
	// Currencies are those Paygate's default routing sends to this provider before any other.
	Currencies []string
}

// Variable is one of a provider's settings: its key (API_KEY reads PAYGATE_{NAME}_API_KEY) and
// what the help says of it.
type Variable struct {
	Key, Help string
}

// Settings are a provider's settings by key (BASE_URL, API_KEY, ...), as configured.
type Settings map[string]string

// BaseURL is where the provider's API is; "" when the built-in sandbox serves.
func (s Settings) BaseURL() string { return s[BaseURLKey] }

// BaseURLKey is the key of every provider's API address.
const BaseURLKey = "BASE_URL"

// VariableName is the environment variable that holds a provider's setting.
func VariableName(providerName, key string) string {
	return "PAYGATE_" + strings.ToUpper(providerName) + "_" + key
}

// Sandbox is a provider's built-in stand-in: it answers the provider's API, over Paygate's
// database, so that every server sees one provider, and sends its webhooks. It also serves the
// page a shopper authenticates on (3-D Secure) at GET /challenge/{id}: one form that POSTs
// outcome=complete or outcome=fail to the page's own URL, which answers 303 to the charge's
// return URL as its provider would.
type Sandbox interface {
	http.Handler
	// Switches make it misbehave, so that failover and timeouts can be shown.
	Switches() *SandboxSwitches
	// SendWebhooks makes it deliver its provider's webhooks as config says, until ctx ends. Call
	// it before the sandbox serves.
	SendWebhooks(ctx context.Context, config outbound.WebhookConfig) error
	// Simulate brings about kind for the payment Paygate made under paymentReference, as happens
	// at the provider outside Paygate's requests, and sends its webhook.
	Simulate(ctx context.Context, kind Simulation, paymentReference string) error
}

// WebhookVerifier checks a provider's webhook delivery and returns its events. It may be a
// shared secret's HMAC, a certificate or a key pair; it may ask the provider (ctx bounds that).
type WebhookVerifier interface {
	Verify(ctx context.Context, header http.Header, body []byte) ([]WebhookEvent, error)
}

// WebhookEvent is one verified event, as its provider sent it.
type WebhookEvent struct {
	// ID is the provider's id of the event, by which a delivery sent again is known.
	ID   string
	Type string
	// Payload is the event's own JSON.
	Payload []byte
}

var (
	// ErrInvalidSignature means a delivery was not signed as its provider signs: its body is
	// never read further.
	ErrInvalidSignature = errors.New("invalid signature")
	// ErrMalformed means a signed delivery is not the provider's shape.
	ErrMalformed = errors.New("not a notification of this provider")
	// ErrWebhooksNotConfigured means the settings lack what verifying the provider's webhooks
	// takes; its webhooks are refused until it is set.
	ErrWebhooksNotConfigured = errors.New("the provider's webhook secret is not set")
)

// CheckAPI refuses a base URL that is not an http(s) URL, and a real API (a base URL set)
// without the settings it needs: better not to start than to fail every payment.
func CheckAPI(providerName string, s Settings, required ...string) error {
	if s.BaseURL() == "" {
		return nil
	}
	u, err := url.Parse(s.BaseURL())
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%s must be an http or https URL", VariableName(providerName, BaseURLKey))
	}
	for _, key := range required {
		if s[key] == "" {
			return fmt.Errorf("%s is set: set %s too", VariableName(providerName, BaseURLKey), VariableName(providerName, key))
		}
	}
	return nil
}

// SandboxSecret is the webhook secret a sandbox signs with: the one configured under key, or one
// made now: 32 random bytes in hex, which every provider's scheme here takes (Adyen's HMAC key is
// hex).
func SandboxSecret(configured Settings, key string) string {
	if secret := configured[key]; secret != "" {
		return secret
	}
	made := make([]byte, 32)
	rand.Read(made)
	return hex.EncodeToString(made)
}

// NotConfigured is ErrWebhooksNotConfigured, naming the variable to set.
func NotConfigured(providerName, key string) error {
	return fmt.Errorf("%w: set %s", ErrWebhooksNotConfigured, VariableName(providerName, key))
}
