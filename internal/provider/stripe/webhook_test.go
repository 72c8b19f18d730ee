package stripe

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	stripewebhook "github.com/stripe/stripe-go/v84/webhook"

	"github.com/paygate/paygate/internal/provider"
)

const stripeEvent = `{"id":"evt_1","object":"event","type":"payment_intent.succeeded","data":{"object":{"id":"pi_1"}}}`

// verifyAsInbox checks body, signed with header, as the inbox does, with secret at now.
func verifyAsInbox(body []byte, header, secret string, now time.Time) (provider.WebhookEvent, error) {
	events, err := verifier{secret: secret, now: func() time.Time { return now }}.Verify(context.Background(), http.Header{signatureHeader: {header}}, body)
	if err != nil {
		return provider.WebhookEvent{}, err
	}
	return events[0], nil
}

// TestStripeSignatures: a payload signed as Stripe's own library signs it passes; tampered, signed
// with another secret, too old or new, without a header or with garbage in it, it does not.
func TestStripeSignatures(t *testing.T) {
	now := time.Now()
	signed := func(body, secret string, at time.Time) string {
		return stripewebhook.GenerateTestSignedPayload(&stripewebhook.UnsignedPayload{Payload: []byte(body), Secret: secret, Timestamp: at}).Header
	}
	header := signed(stripeEvent, "whsec_x", now)
	event, err := verifyAsInbox([]byte(stripeEvent), header, "whsec_x", now)
	if err != nil || event.ID != "evt_1" || event.Type != "payment_intent.succeeded" || false {
		t.Fatalf("a signed event = %+v, %v", event, err)
	}
	// Several v1 values (a secret being rolled): one that matches is enough.
	other := signed(stripeEvent, "whsec_old", now)
	if _, err := verifyAsInbox([]byte(stripeEvent), other+","+header[strings.Index(header, "v1="):], "whsec_x", now); err != nil {
		t.Errorf("with an old v1 beside the good one: %v", err)
	}
	for name, tc := range map[string]struct {
		body, header string
		at           time.Time
	}{
		"tampered":     {strings.Replace(stripeEvent, "pi_1", "pi_2", 1), header, now},
		"wrong secret": {stripeEvent, signed(stripeEvent, "whsec_y", now), now},
		"stale":        {stripeEvent, signed(stripeEvent, "whsec_x", now.Add(-301*time.Second)), now},
		"future":       {stripeEvent, signed(stripeEvent, "whsec_x", now.Add(301*time.Second)), now},
		"no header":    {stripeEvent, "", now},
		"garbage":      {stripeEvent, "t=abc,v1=zz,,=", now},
		"no v1":        {stripeEvent, "t=" + header[2:strings.Index(header, ",")], now},
	} {
		if _, err := verifyAsInbox([]byte(tc.body), tc.header, "whsec_x", tc.at); !errors.Is(err, provider.ErrInvalidSignature) {
			t.Errorf("%s: %v, want an invalid signature", name, err)
		}
	}
	notEvent := `{"id":"pi_1","object":"payment_intent"}`
	if _, err := verifyAsInbox([]byte(notEvent), signed(notEvent, "whsec_x", now), "whsec_x", now); !errors.Is(err, provider.ErrMalformed) {
		t.Errorf("a signed body that is no event = %v", err)
	}
	if _, err := verifyAsInbox([]byte(stripeEvent), header, "", now); !errors.Is(err, provider.ErrInvalidSignature) {
		t.Errorf("with no secret configured = %v", err)
	}
}

// TestSignVerifies: what Sign signs verifies, as Stripe's own library checks it too.
func TestSignVerifies(t *testing.T) {
	now := time.Now()
	header := Sign("whsec_x", []byte(stripeEvent), now)
	if _, err := verifyAsInbox([]byte(stripeEvent), header, "whsec_x", now); err != nil {
		t.Errorf("verify: %v", err)
	}
	if err := stripewebhook.ValidatePayload([]byte(stripeEvent), header, "whsec_x"); err != nil {
		t.Errorf("stripe-go: %v", err)
	}
}

// The verifiers read bodies and headers anyone can send: whatever comes, they answer an event or
// an error, never panic, and never pass what the secret did not sign. go test runs the seeds;
// go test -fuzz runs them further.

func FuzzVerify(f *testing.F) {
	now := time.Unix(1_800_000_000, 0)
	sign := func(body string) string {
		mac := hmac.New(sha256.New, []byte("whsec_x"))
		mac.Write([]byte(strconv.FormatInt(now.Unix(), 10) + "." + body))
		return "t=" + strconv.FormatInt(now.Unix(), 10) + ",v1=" + hex.EncodeToString(mac.Sum(nil))
	}
	f.Add([]byte(stripeEvent), sign(stripeEvent))
	f.Add([]byte(`{"id":"evt_1"}`), sign(`{"id":"evt_1"}`))
	f.Add([]byte(`[]`), "t=1,v1=00,v1=zz")
	f.Fuzz(func(t *testing.T, body []byte, header string) {
		event, err := verifyAsInbox(body, header, "whsec_x", now)
		if err == nil && (event.ID == "" || header != sign(string(body)) && !hasSignature(header, sign(string(body)))) {
			t.Errorf("passed %q with %q", body, header)
		}
	})
}

// hasSignature reports whether header carries the v1 signature of want among others, in either
// case of hex digits: the same bytes either way.
func hasSignature(header, want string) bool {
	v1 := want[len(want)-64:]
	for i := 0; i+64 <= len(header); i++ {
		if strings.EqualFold(header[i:i+64], v1) {
			return true
		}
	}
	return false
}
