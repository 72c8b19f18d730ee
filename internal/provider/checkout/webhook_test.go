package checkout

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"testing"

	"github.com/paygate/paygate/internal/provider"
)

// verifyAsInbox checks body, signed with header, as the inbox does, with secret.
func verifyAsInbox(body []byte, header, secret string) (provider.WebhookEvent, error) {
	events, err := verifier{secret: secret}.Verify(context.Background(), http.Header{signatureHeader: {header}}, body)
	if err != nil {
		return provider.WebhookEvent{}, err
	}
	return events[0], nil
}

func TestCheckoutSignatures(t *testing.T) {
	body := []byte(`{"id":"evt_1","type":"payment_approved","data":{"id":"pay_1"}}`)
	mac := hmac.New(sha256.New, []byte("cko_secret"))
	mac.Write(body)
	good := hex.EncodeToString(mac.Sum(nil))
	if Sign("cko_secret", body) != good {
		t.Error("Sign differs from the HMAC of the body")
	}
	if event, err := verifyAsInbox(body, good, "cko_secret"); err != nil || event.ID != "evt_1" || event.Type != "payment_approved" {
		t.Fatalf("a signed event = %+v, %v", event, err)
	}
	for name, header := range map[string]string{"tampered": good[:len(good)-1] + "0", "missing": "", "garbage": "not hex"} {
		if _, err := verifyAsInbox(body, header, "cko_secret"); !errors.Is(err, provider.ErrInvalidSignature) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := verifyAsInbox(body, good, "another"); !errors.Is(err, provider.ErrInvalidSignature) {
		t.Errorf("wrong secret: %v", err)
	}
}

// The verifier reads bodies and headers anyone can send: whatever comes, it answers an event or
// an error, never panics, and never passes what the secret did not sign. go test runs the seeds;
// go test -fuzz runs them further.
func FuzzVerify(f *testing.F) {
	f.Add([]byte(`{"id":"evt_1","type":"payment_approved"}`), "00")
	f.Add([]byte(`{`), "zz")
	f.Fuzz(func(t *testing.T, body []byte, header string) {
		mac := hmac.New(sha256.New, []byte("cko_secret"))
		mac.Write(body)
		if _, err := verifyAsInbox(body, header, "cko_secret"); err == nil && !hmac.Equal(mustHex(header), mac.Sum(nil)) {
			t.Errorf("passed %q with %q", body, header)
		}
	})
}

func mustHex(s string) []byte {
	b, _ := hex.DecodeString(s)
	return b
}
