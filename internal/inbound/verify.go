// Package inbound takes the payment providers' webhooks: it verifies each delivery, stores its
// events once, and applies them to payments in the background, durably; it keeps them for people
// to read and retry.
package inbound

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Event is one verified event, as its provider sent it.
type Event struct {
	Provider string
	// ID is the provider's id of the event, by which a delivery sent again is known: Stripe's and
	// Checkout.com's event id; for Adyen, which has none, the item's pspReference, eventCode and
	// success.
	ID   string
	Type string
	// Payload is the event's own JSON: Stripe's and Checkout.com's event, one Adyen item.
	Payload json.RawMessage
}

var (
	// ErrInvalidSignature means the body was not signed with the secret: it is never read further.
	ErrInvalidSignature = errors.New("invalid signature")
	// ErrMalformed means a signed body is not the provider's shape.
	ErrMalformed = errors.New("not a notification of this provider")
)

// stripeTolerance is how old or new a Stripe signature's timestamp may be, as Stripe's libraries
// allow, so a captured delivery cannot be replayed later.
const stripeTolerance = 300 * time.Second

// maxAdyenItems bounds the items of one Adyen notification; Adyen sends one.
const maxAdyenItems = 100

// VerifyStripe checks a Stripe-Signature header (t=TIMESTAMP,v1=HEX[,v1=HEX...]): any v1 must be
// the HMAC-SHA256 under secret of "TIMESTAMP.BODY", and the timestamp within 300 s of now.
func VerifyStripe(body []byte, header, secret string, now time.Time) (Event, error) {
	var timestamp string
	var signatures [][]byte
	for _, part := range strings.Split(header, ",") {
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
	if err != nil || len(signatures) == 0 || secret == "" {
		return Event{}, ErrInvalidSignature
	}
	if age := now.Sub(time.Unix(at, 0)); age > stripeTolerance || age < -stripeTolerance {
		return Event{}, fmt.Errorf("%w: the timestamp is %s off", ErrInvalidSignature, age.Round(time.Second))
	}
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(timestamp + "."))
	mac.Write(body)
	expected := mac.Sum(nil)
	signed := false
	for _, sig := range signatures {
		signed = hmac.Equal(sig, expected) || signed // every one compared, in constant time
	}
	if !signed {
		return Event{}, ErrInvalidSignature
	}
	var event struct {
		ID     string `json:"id"`
		Object string `json:"object"`
		Type   string `json:"type"`
	}
	if json.Unmarshal(body, &event) != nil || event.ID == "" || event.Type == "" || event.Object != "event" {
		return Event{}, ErrMalformed
	}
	return Event{Provider: "stripe", ID: event.ID, Type: event.Type, Payload: body}, nil
}

// VerifyCheckout checks a Cko-Signature header: the hex HMAC-SHA256 of the body under secret.
func VerifyCheckout(body []byte, header, secret string) (Event, error) {
	given, err := hex.DecodeString(header)
	if err != nil || secret == "" {
		return Event{}, ErrInvalidSignature
	}
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	if !hmac.Equal(given, mac.Sum(nil)) {
		return Event{}, ErrInvalidSignature
	}
	var event struct {
		ID   string `json:"id"`
		Type string `json:"type"`
	}
	if json.Unmarshal(body, &event) != nil || event.ID == "" || event.Type == "" {
		return Event{}, ErrMalformed
	}
	return Event{Provider: "checkout", ID: event.ID, Type: event.Type, Payload: body}, nil
}

// adyenItem is the part of an Adyen notification item that is signed and names it.
type adyenItem struct {
	PSPReference        string `json:"pspReference"`
	OriginalReference   string `json:"originalReference"`
	MerchantAccountCode string `json:"merchantAccountCode"`
	MerchantReference   string `json:"merchantReference"`
	Amount              struct {
		Value    *int64 `json:"value"`
		Currency string `json:"currency"`
	} `json:"amount"`
	EventCode      string            `json:"eventCode"`
	Success        string            `json:"success"`
	AdditionalData map[string]string `json:"additionalData"`
}

// VerifyAdyen reads an Adyen notification and checks each item's additionalData.hmacSignature:
// Base64 of the HMAC-SHA256, under the hex key, of pspReference:originalReference:
// merchantAccountCode:merchantReference:value:currency:eventCode:success. One item not signed
// refuses the whole notification.
func VerifyAdyen(body []byte, hexKey string) ([]Event, error) {
	key, err := hex.DecodeString(hexKey)
	if err != nil || len(key) == 0 {
		return nil, ErrInvalidSignature
	}
	var notification struct {
		NotificationItems []struct {
			Item json.RawMessage `json:"NotificationRequestItem"`
		} `json:"notificationItems"`
	}
	if json.Unmarshal(body, &notification) != nil || len(notification.NotificationItems) == 0 || len(notification.NotificationItems) > maxAdyenItems {
		return nil, ErrMalformed
	}
	events := make([]Event, 0, len(notification.NotificationItems))
	for _, raw := range notification.NotificationItems {
		var item adyenItem
		if json.Unmarshal(raw.Item, &item) != nil || item.Amount.Value == nil {
			return nil, ErrMalformed
		}
		given, err := base64.StdEncoding.DecodeString(item.AdditionalData["hmacSignature"])
		if err != nil {
			return nil, ErrInvalidSignature
		}
		signed := strings.Join([]string{item.PSPReference, item.OriginalReference, item.MerchantAccountCode, item.MerchantReference,
			strconv.FormatInt(*item.Amount.Value, 10), item.Amount.Currency, item.EventCode, item.Success}, ":")
		mac := hmac.New(sha256.New, key)
		mac.Write([]byte(signed))
		if !hmac.Equal(given, mac.Sum(nil)) {
			return nil, ErrInvalidSignature
		}
		if item.PSPReference == "" || item.EventCode == "" {
			return nil, ErrMalformed
		}
		events = append(events, Event{Provider: "adyen", ID: item.PSPReference + ":" + item.EventCode + ":" + item.Success,
			Type: item.EventCode, Payload: raw.Item})
	}
	return events, nil
}
