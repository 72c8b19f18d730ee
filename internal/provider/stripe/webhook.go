package stripe

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/paygate/paygate/internal/provider"
)

// signatureHeader carries the signature of Stripe's webhooks.
const signatureHeader = "Stripe-Signature"

// tolerance is how old or new a signature's timestamp may be, as Stripe's libraries allow, so a
// captured delivery cannot be replayed later.
const tolerance = 300 * time.Second

// Sign is the Stripe-Signature header of body sent at: the time, and the HMAC-SHA256 under the
// endpoint's signing secret of "time.body" (scheme v1). Each try is signed anew, since receivers
// refuse old timestamps.
func Sign(secret string, body []byte, at time.Time) string {
	timestamp := strconv.FormatInt(at.Unix(), 10)
	return "t=" + timestamp + ",v1=" + hex.EncodeToString(mac(secret, timestamp, body))
}

// mac is the v1 signature of body sent at timestamp.
func mac(secret, timestamp string, body []byte) []byte {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(timestamp + "."))
	m.Write(body)
	return m.Sum(nil)
}

// verifier checks Stripe's webhooks against the endpoint's signing secret.
type verifier struct {
	secret string
	now    func() time.Time
}

// Verify checks the Stripe-Signature header (t=TIMESTAMP,v1=HEX[,v1=HEX...]): any v1 must be
// the signature of the body at TIMESTAMP, and the timestamp within 300 s of now.
func (v verifier) Verify(_ context.Context, header http.Header, body []byte) ([]provider.WebhookEvent, error) {
	var timestamp string
	var signatures [][]byte
	for _, part := range strings.Split(header.Get(signatureHeader), ",") {
		key, value, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch key {
		case "t":
			timestamp = value
		case "v1":
			if sig, err := hex.DecodeString(value); err == nil {
				signatures = append(signatures, sig)
			}
		}
	}
	at, err := strconv.ParseInt(timestamp, 10, 64)
	if err != nil || len(signatures) == 0 || v.secret == "" {
		return nil, provider.ErrInvalidSignature
	}
	if age := v.now().Sub(time.Unix(at, 0)); age > tolerance || age < -tolerance {
		return nil, fmt.Errorf("%w: the timestamp is %s off", provider.ErrInvalidSignature, age.Round(time.Second))
	}
	expected := mac(v.secret, timestamp, body)
	signed := false
	for _, sig := range signatures {
		signed = hmac.Equal(sig, expected) || signed // every one compared, in constant time
	}
	if !signed {
		return nil, provider.ErrInvalidSignature
	}
	var event struct {
		ID     string `json:"id"`
		Object string `json:"object"`
		Type   string `json:"type"`
	}
	if json.Unmarshal(body, &event) != nil || event.ID == "" || event.Type == "" || event.Object != "event" {
		return nil, provider.ErrMalformed
	}
	return []provider.WebhookEvent{{ID: event.ID, Type: event.Type, Payload: body}}, nil
}
