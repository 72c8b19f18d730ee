package adyen

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/paygate/paygate/internal/provider"
)

// Event codes of the notifications Paygate reads.
const (
	eventAuthorisation = "AUTHORISATION"
	eventRefund        = "REFUND"
	eventRefundFailed  = "REFUND_FAILED"
	eventCapture       = "CAPTURE"
	eventCaptureFailed = "CAPTURE_FAILED"
	eventCancellation  = "CANCELLATION"
	eventChargeback    = "CHARGEBACK"
)

// maxNotificationItems bounds the items of one notification; Adyen sends one.
const maxNotificationItems = 100

// notificationItem is what Paygate reads of an item of Adyen's standard notification: what is
// signed, what names the event, and what it tells.
type notificationItem struct {
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
	Reason         string            `json:"reason"`
	AdditionalData map[string]string `json:"additionalData"`
}

// mac is the HMAC-SHA256, under key, of the item's signed fields:
// pspReference:originalReference:merchantAccountCode:merchantReference:value:currency:eventCode:success.
func (item notificationItem) mac(key []byte) []byte {
	value := ""
	if item.Amount.Value != nil {
		value = strconv.FormatInt(*item.Amount.Value, 10)
	}
	signed := strings.Join([]string{item.PSPReference, item.OriginalReference, item.MerchantAccountCode, item.MerchantReference,
		value, item.Amount.Currency, item.EventCode, item.Success}, ":")
	m := hmac.New(sha256.New, key)
	m.Write([]byte(signed))
	return m.Sum(nil)
}

// SignItem is the additionalData.hmacSignature of a notification item (its JSON) under the HMAC
// key (hex, as Adyen shows it): Base64 of the item's HMAC.
func SignItem(hexKey string, item []byte) (string, error) {
	key, err := hex.DecodeString(hexKey)
	if err != nil || len(key) == 0 {
		return "", provider.ErrInvalidSignature
	}
	var read notificationItem
	if err := json.Unmarshal(item, &read); err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(read.mac(key)), nil
}

// verifier checks Adyen's notifications against the HMAC key.
type verifier struct{ key []byte }

// Verify reads an Adyen notification and checks each item's additionalData.hmacSignature. One
// item not signed refuses the whole notification.
func (v verifier) Verify(_ context.Context, _ http.Header, body []byte) ([]provider.WebhookEvent, error) {
	var notification struct {
		NotificationItems []struct {
			Item json.RawMessage `json:"NotificationRequestItem"`
		} `json:"notificationItems"`
	}
	if json.Unmarshal(body, &notification) != nil || len(notification.NotificationItems) == 0 || len(notification.NotificationItems) > maxNotificationItems {
		return nil, provider.ErrMalformed
	}
	events := make([]provider.WebhookEvent, 0, len(notification.NotificationItems))
	for _, raw := range notification.NotificationItems {
		var item notificationItem
		if json.Unmarshal(raw.Item, &item) != nil || item.Amount.Value == nil {
			return nil, provider.ErrMalformed
		}
		given, err := base64.StdEncoding.DecodeString(item.AdditionalData["hmacSignature"])
		if err != nil || !hmac.Equal(given, item.mac(v.key)) {
			return nil, provider.ErrInvalidSignature
		}
		if item.PSPReference == "" || item.EventCode == "" {
			return nil, provider.ErrMalformed
		}
		// Adyen's items have no id: a delivery sent again is known by these.
		events = append(events, provider.WebhookEvent{ID: item.PSPReference + ":" + item.EventCode + ":" + item.Success,
			Type: item.EventCode, Payload: raw.Item})
	}
	return events, nil
}
