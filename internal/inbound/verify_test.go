package inbound

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	stripewebhook "github.com/stripe/stripe-go/v84/webhook"

	"github.com/paygate/paygate/internal/database/databasetest"
	"github.com/paygate/paygate/internal/outbound"
	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/provider/adyen"
	"github.com/paygate/paygate/internal/provider/checkout"
	"github.com/paygate/paygate/internal/provider/providertest"
)

const stripeEvent = `{"id":"evt_1","object":"event","type":"payment_intent.succeeded","data":{"object":{"id":"pi_1"}}}`

// TestStripeSignatures: a payload signed as Stripe's own library signs it passes; tampered, signed
// with another secret, too old or new, without a header or with garbage in it, it does not.
func TestStripeSignatures(t *testing.T) {
	now := time.Now()
	signed := func(body, secret string, at time.Time) string {
		return stripewebhook.GenerateTestSignedPayload(&stripewebhook.UnsignedPayload{Payload: []byte(body), Secret: secret, Timestamp: at}).Header
	}
	header := signed(stripeEvent, "whsec_x", now)
	event, err := VerifyStripe([]byte(stripeEvent), header, "whsec_x", now)
	if err != nil || event.ID != "evt_1" || event.Type != "payment_intent.succeeded" || event.Provider != "stripe" {
		t.Fatalf("a signed event = %+v, %v", event, err)
	}
	// Several v1 values (a secret being rolled): one that matches is enough.
	other := signed(stripeEvent, "whsec_old", now)
	if _, err := VerifyStripe([]byte(stripeEvent), other+","+header[strings.Index(header, "v1="):], "whsec_x", now); err != nil {
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
		if _, err := VerifyStripe([]byte(tc.body), tc.header, "whsec_x", tc.at); !errors.Is(err, ErrInvalidSignature) {
			t.Errorf("%s: %v, want an invalid signature", name, err)
		}
	}
	notEvent := `{"id":"pi_1","object":"payment_intent"}`
	if _, err := VerifyStripe([]byte(notEvent), signed(notEvent, "whsec_x", now), "whsec_x", now); !errors.Is(err, ErrMalformed) {
		t.Errorf("a signed body that is no event = %v", err)
	}
	if _, err := VerifyStripe([]byte(stripeEvent), header, "", now); !errors.Is(err, ErrInvalidSignature) {
		t.Errorf("with no secret configured = %v", err)
	}
}

func TestCheckoutSignatures(t *testing.T) {
	body := []byte(`{"id":"evt_1","type":"payment_approved","data":{"id":"pay_1"}}`)
	mac := hmac.New(sha256.New, []byte("cko_secret"))
	mac.Write(body)
	good := hex.EncodeToString(mac.Sum(nil))
	if event, err := VerifyCheckout(body, good, "cko_secret"); err != nil || event.ID != "evt_1" || event.Type != "payment_approved" {
		t.Fatalf("a signed event = %+v, %v", event, err)
	}
	for name, header := range map[string]string{"tampered": good[:len(good)-1] + "0", "missing": "", "garbage": "not hex"} {
		if _, err := VerifyCheckout(body, header, "cko_secret"); !errors.Is(err, ErrInvalidSignature) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := VerifyCheckout(body, good, "another"); !errors.Is(err, ErrInvalidSignature) {
		t.Errorf("wrong secret: %v", err)
	}
}

// TestAdyenSignatures: the item of the test of Adyen's own library, with the signature it
// expects, passes; one field changed, or another key, fails the whole notification.
func TestAdyenSignatures(t *testing.T) {
	const key = "DFB1EB5485895CFA84146406857104ABB4CBCABDC8AAF103A624C8F6A3EAAB00"
	item := `{"pspReference":"pspReference","originalReference":"originalReference","merchantAccountCode":"merchantAccount",
		"merchantReference":"reference","amount":{"value":1000,"currency":"EUR"},"eventCode":"EVENT","success":"true",
		"additionalData":{"hmacSignature":"ipnxGCaUZ4l8TUW75a71/ghd2Fe5ffvX0pV4TLTntIc="}}`
	notification := `{"live":"false","notificationItems":[{"NotificationRequestItem":` + item + `}]}`
	events, err := VerifyAdyen([]byte(notification), key)
	if err != nil || len(events) != 1 || events[0].ID != "pspReference:EVENT:true" || events[0].Type != "EVENT" {
		t.Fatalf("Adyen's own example = %+v, %v", events, err)
	}
	tampered := strings.Replace(notification, `"value":1000`, `"value":1001`, 1)
	if _, err := VerifyAdyen([]byte(tampered), key); !errors.Is(err, ErrInvalidSignature) {
		t.Errorf("tampered: %v", err)
	}
	if _, err := VerifyAdyen([]byte(notification), strings.Repeat("AB", 32)); !errors.Is(err, ErrInvalidSignature) {
		t.Errorf("another key: %v", err)
	}
	unsigned := `{"notificationItems":[{"NotificationRequestItem":` + item + `},{"NotificationRequestItem":` +
		strings.Replace(item, "ipnxGCaUZ4l8TUW75a71/ghd2Fe5ffvX0pV4TLTntIc=", "", 1) + `}]}`
	if _, err := VerifyAdyen([]byte(unsigned), key); !errors.Is(err, ErrInvalidSignature) {
		t.Errorf("a second item unsigned: %v", err)
	}
	for name, body := range map[string]string{"not JSON": "{", "no items": `{"notificationItems":[]}`,
		"too many": `{"notificationItems":[` + strings.Repeat(`{"NotificationRequestItem":`+item+`},`, 100) + `{"NotificationRequestItem":` + item + `}]}`} {
		if _, err := VerifyAdyen([]byte(body), key); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestSandboxWebhooksVerify: what the built-in sandboxes send verifies here, as the real
// providers' notifications would.
func TestSandboxWebhooksVerify(t *testing.T) {
	db := databasetest.SQLite(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const adyenKey, ckoSecret = "44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056", "cko_secret"

	adyenReceiver := providertest.NewWebhookReceiver(t, func(_ http.Header, body []byte) error {
		_, err := VerifyAdyen(body, adyenKey)
		return err
	})
	adyenSandbox := adyen.NewSandbox(db.Ent, time.Now)
	if err := adyenSandbox.SendWebhooks(ctx, outbound.WebhookConfig{URL: adyenReceiver.URL, Secret: adyenKey, After: providertest.NoWait}); err != nil {
		t.Fatal(err)
	}
	adyenURL, adyenCaller := providertest.Serve(t, adyenSandbox)
	adyenClient := &adyen.Client{BaseURL: adyenURL, APIKey: "k", MerchantAccount: "M", Caller: adyenCaller}

	ckoReceiver := providertest.NewWebhookReceiver(t, func(header http.Header, body []byte) error {
		_, err := VerifyCheckout(body, header.Get("Cko-Signature"), ckoSecret)
		return err
	})
	ckoSandbox := checkout.NewSandbox(db.Ent, time.Now)
	if err := ckoSandbox.SendWebhooks(ctx, outbound.WebhookConfig{URL: ckoReceiver.URL, Secret: ckoSecret, After: providertest.NoWait}); err != nil {
		t.Fatal(err)
	}
	ckoURL, ckoCaller := providertest.Serve(t, ckoSandbox)
	ckoClient := &checkout.Client{BaseURL: ckoURL, SecretKey: "sk", Caller: ckoCaller}

	for _, c := range []provider.Provider{adyenClient, ckoClient} {
		if _, err := c.Charge(ctx, providertest.Charge(t, providertest.Approved, 1000)); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for len(adyenReceiver.Deliveries()) == 0 || len(ckoReceiver.Deliveries()) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no webhook within 5 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	adyenReceiver.Verified(t)
	ckoReceiver.Verified(t)
}
