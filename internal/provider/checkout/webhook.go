package checkout

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"

	"github.com/paygate/paygate/internal/provider"
)

// signatureHeader carries the signature of Checkout.com's webhooks.
const signatureHeader = "Cko-Signature"

// Sign is the Cko-Signature header of body: the HMAC-SHA256 of the raw body under the webhook's
// secret key, in hex.
func Sign(secret string, body []byte) string { return hex.EncodeToString(mac(secret, body)) }

func mac(secret string, body []byte) []byte {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	return m.Sum(nil)
}

// verifier checks Checkout.com's webhooks against the webhook's secret key.
type verifier struct{ secret string }

// Verify checks the Cko-Signature header: the body's signature under the secret key.
func (v verifier) Verify(_ context.Context, header http.Header, body []byte) ([]provider.WebhookEvent, error) {
	given, err := hex.DecodeString(header.Get(signatureHeader))
	if err != nil || v.secret == "" || !hmac.Equal(given, mac(v.secret, body)) {
		return nil, provider.ErrInvalidSignature
	}
	var event struct {
		ID   string `json:"id"`
		Type string `json:"type"`
	}
	if json.Unmarshal(body, &event) != nil || event.ID == "" || event.Type == "" {
		return nil, provider.ErrMalformed
	}
	return []provider.WebhookEvent{{ID: event.ID, Type: event.Type, Payload: body}}, nil
}
