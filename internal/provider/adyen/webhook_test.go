package adyen

import (
	"context"
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	"github.com/paygate/paygate/internal/provider"
)

// verifyAsInbox checks an Adyen notification as the inbox does, under the hex key.
func verifyAsInbox(body []byte, hexKey string) ([]provider.WebhookEvent, error) {
	key, _ := hex.DecodeString(hexKey)
	return verifier{key: key}.Verify(context.Background(), nil, body)
}

// TestAdyenSignatures: the item of the test of Adyen's own library, with the signature it
// expects, passes; one field changed, or another key, fails the whole notification.
func TestAdyenSignatures(t *testing.T) {
	const key = "DFB1EB5485895CFA84146406857104ABB4CBCABDC8AAF103A624C8F6A3EAAB00"
	item := `{"pspReference":"pspReference","originalReference":"originalReference","merchantAccountCode":"merchantAccount",
		"merchantReference":"reference","amount":{"value":1000,"currency":"EUR"},"eventCode":"EVENT","success":"true",
		"additionalData":{"hmacSignature":"ipnxGCaUZ4l8TUW75a71/ghd2Fe5ffvX0pV4TLTntIc="}}`
	notification := `{"live":"false","notificationItems":[{"NotificationRequestItem":` + item + `}]}`
	events, err := verifyAsInbox([]byte(notification), key)
	if err != nil || len(events) != 1 || events[0].ID != "pspReference:EVENT:true" || events[0].Type != "EVENT" {
		t.Fatalf("Adyen's own example = %+v, %v", events, err)
	}
	tampered := strings.Replace(notification, `"value":1000`, `"value":1001`, 1)
	if _, err := verifyAsInbox([]byte(tampered), key); !errors.Is(err, provider.ErrInvalidSignature) {
		t.Errorf("tampered: %v", err)
	}
	if _, err := verifyAsInbox([]byte(notification), strings.Repeat("AB", 32)); !errors.Is(err, provider.ErrInvalidSignature) {
		t.Errorf("another key: %v", err)
	}
	unsigned := `{"notificationItems":[{"NotificationRequestItem":` + item + `},{"NotificationRequestItem":` +
		strings.Replace(item, "ipnxGCaUZ4l8TUW75a71/ghd2Fe5ffvX0pV4TLTntIc=", "", 1) + `}]}`
	if _, err := verifyAsInbox([]byte(unsigned), key); !errors.Is(err, provider.ErrInvalidSignature) {
		t.Errorf("a second item unsigned: %v", err)
	}
	for name, body := range map[string]string{"not JSON": "{", "no items": `{"notificationItems":[]}`,
		"too many": `{"notificationItems":[` + strings.Repeat(`{"NotificationRequestItem":`+item+`},`, 100) + `{"NotificationRequestItem":` + item + `}]}`} {
		if _, err := verifyAsInbox([]byte(body), key); !errors.Is(err, provider.ErrMalformed) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// The verifier reads bodies anyone can send: whatever comes, it answers events or an error,
// never panics, and never passes what the key did not sign. go test runs the seeds; go test
// -fuzz runs them further.
func FuzzVerify(f *testing.F) {
	f.Add([]byte(`{"live":"false","notificationItems":[{"NotificationRequestItem":{"pspReference":"p","amount":{"value":1,"currency":"EUR"},"eventCode":"AUTHORISATION","success":"true","additionalData":{"hmacSignature":"AA=="}}}]}`))
	f.Add([]byte(`{"notificationItems":[{"NotificationRequestItem":null}]}`))
	f.Add([]byte(`{"notificationItems":null}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		// Bodies from the fuzzer are not signed with this key: none may pass.
		if events, err := verifyAsInbox(body, "44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056"); err == nil {
			t.Errorf("passed %q: %+v", body, events)
		}
	})
}
