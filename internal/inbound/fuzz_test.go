package inbound

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The verifiers read bodies and headers anyone can send: whatever comes, they answer an event or
// an error, never panic, and never pass what the secret did not sign. go test runs the seeds;
// go test -fuzz runs them further.

func FuzzVerifyStripe(f *testing.F) {
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
		event, err := VerifyStripe(body, header, "whsec_x", now)
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

func FuzzVerifyCheckout(f *testing.F) {
	f.Add([]byte(`{"id":"evt_1","type":"payment_approved"}`), "00")
	f.Add([]byte(`{`), "zz")
	f.Fuzz(func(t *testing.T, body []byte, header string) {
		mac := hmac.New(sha256.New, []byte("cko_secret"))
		mac.Write(body)
		if _, err := VerifyCheckout(body, header, "cko_secret"); err == nil && !hmac.Equal(mustHex(header), mac.Sum(nil)) {
			t.Errorf("passed %q with %q", body, header)
		}
	})
}

func mustHex(s string) []byte {
	b, _ := hex.DecodeString(s)
	return b
}

func FuzzVerifyAdyen(f *testing.F) {
	f.Add([]byte(`{"live":"false","notificationItems":[{"NotificationRequestItem":{"pspReference":"p","amount":{"value":1,"currency":"EUR"},"eventCode":"AUTHORISATION","success":"true","additionalData":{"hmacSignature":"AA=="}}}]}`))
	f.Add([]byte(`{"notificationItems":[{"NotificationRequestItem":null}]}`))
	f.Add([]byte(`{"notificationItems":null}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		// Bodies from the fuzzer are not signed with this key: none may pass.
		if events, err := VerifyAdyen(body, "44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056"); err == nil {
			t.Errorf("passed %q: %+v", body, events)
		}
	})
}
