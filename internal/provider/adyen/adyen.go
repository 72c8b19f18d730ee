// Package adyen is the Adyen adapter: it charges cards through Checkout API v71's /payments (or
// authorises them, to capture or cancel later), finishes those the shopper authenticated (3-D
// Secure, by redirect) through /payments/details, and refunds them (JSON requests and answers),
// and holds a sandbox that answers as Adyen's test environment does.
package adyen

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/paygate/paygate/internal/provider"
)

// Name is the provider's name on payments and in routing.
const Name = "adyen"

// Result codes and refusal reason codes of Adyen's that Paygate tells apart.
const (
	resultAuthorised       = "Authorised"
	resultRefused          = "Refused"
	resultError            = "Error"
	resultRedirectShopper  = "RedirectShopper" // the shopper must authenticate on action.url first
	errorInProgress        = "704"             // the key's first request is in progress or done
	reasonExpiredCard      = "6"
	reasonNotEnoughBalance = "12"
)

// Client speaks to Adyen's Checkout API at BaseURL for one merchant account.
type Client struct {
	BaseURL         string
	APIKey          string
	MerchantAccount string
	provider.Caller
}

var (
	_ provider.Provider      = (*Client)(nil)
	_ provider.Capturer      = (*Client)(nil)
	_ provider.Authenticator = (*Client)(nil)
)

// Name identifies Adyen on payments.
func (*Client) Name() string { return Name }

// counting is how Adyen counts amounts: in ISO 4217's minor units but for four currencies, which
// its currency table marks as differing from the standard.
var counting = provider.Counting{Provider: "adyen", Scales: map[string]int{"CLP": 2, "CVE": 0, "IDR": 0, "ISK": 2}}

// Counting says how the provider counts amounts.
func (*Client) Counting() provider.Counting { return counting }

// adyenError is Adyen's answer to a request it refuses.
type adyenError struct {
	Status    int    `json:"status"`
	ErrorCode string `json:"errorCode"`
	Message   string `json:"message"`
	ErrorType string `json:"errorType"`
}

type amount struct {
	Value    int64  `json:"value"`
	Currency string `json:"currency"`
}

type paymentMethod struct {
	Type        string `json:"type"`
	Number      string `json:"number"`
	ExpiryMonth string `json:"expiryMonth"`
	ExpiryYear  string `json:"expiryYear"`
	CVC         string `json:"cvc"`
	HolderName  string `json:"holderName,omitempty"`
}

type paymentRequest struct {
	Amount          amount            `json:"amount"`
	Reference       string            `json:"reference"`
	MerchantAccount string            `json:"merchantAccount"`
	PaymentMethod   paymentMethod     `json:"paymentMethod"`
	AdditionalData  map[string]string `json:"additionalData,omitempty"`
	// Sent only for a charge with a return URL: without one no 3-D Secure is asked for.
	*redirectAuthentication
}

// redirectAuthentication is what 3-D Secure 2 by redirect takes: where Adyen's page sends the
// shopper back, the Web channel with the browser's details, and native authentication turned off
// so that Adyen answers with a page to redirect to rather than one for its JavaScript component.
type redirectAuthentication struct {
	ReturnURL          string             `json:"returnUrl"`
	Channel            string             `json:"channel"`
	BrowserInfo        browserInfo        `json:"browserInfo"`
	AuthenticationData authenticationData `json:"authenticationData"`
	// Both ways by GET: Paygate can only send a browser to a URL, and reads what comes back from
	// the return URL's query.
	RedirectToIssuerMethod   string `json:"redirectToIssuerMethod"`
	RedirectFromIssuerMethod string `json:"redirectFromIssuerMethod"`
}

type browserInfo struct {
	AcceptHeader   string `json:"acceptHeader"`
	ColorDepth     int32  `json:"colorDepth"`
	JavaEnabled    bool   `json:"javaEnabled"`
	Language       string `json:"language"`
	ScreenHeight   int32  `json:"screenHeight"`
	ScreenWidth    int32  `json:"screenWidth"`
	TimeZoneOffset int32  `json:"timeZoneOffset"`
	UserAgent      string `json:"userAgent"`
}

// shopperBrowser is the browserInfo every payment with a return URL sends. Adyen requires one for
// 3-D Secure 2 on the Web channel, but a charge request carries nothing of the shopper's browser
// (the merchant's server asks Paygate for the charge), so it names Paygate and describes a common
// desktop screen; the authentication itself runs in the shopper's own browser, on Adyen's page.
var shopperBrowser = browserInfo{AcceptHeader: "text/html", ColorDepth: 24, Language: "en", ScreenHeight: 1080, ScreenWidth: 1920,
	UserAgent: "Mozilla/5.0 (compatible; Paygate)"}

type authenticationData struct {
	ThreeDSRequestData threeDSRequestData `json:"threeDSRequestData"`
}

type threeDSRequestData struct {
	NativeThreeDS string `json:"nativeThreeDS"`
}

type paymentAnswer struct {
	// PSPReference is missing from an answer that redirects the shopper: Adyen gives it in the
	// answer of /payments/details.
	PSPReference      string          `json:"pspReference"`
	ResultCode        string          `json:"resultCode"`
	RefusalReason     string          `json:"refusalReason,omitempty"`
	RefusalReasonCode string          `json:"refusalReasonCode,omitempty"`
	MerchantReference string          `json:"merchantReference"`
	Amount            amount          `json:"amount"`
	Action            *redirectAction `json:"action,omitempty"`
}

// redirectAction is the action of a RedirectShopper answer: where to send the shopper's browser.
type redirectAction struct {
	Type   string `json:"type"`
	URL    string `json:"url"`
	Method string `json:"method"` // GET, or POST with a form (data) Paygate cannot send
}

// detailsRequest is the request of /payments/details for a shopper back from a redirect.
type detailsRequest struct {
	Details struct {
		RedirectResult string `json:"redirectResult"`
	} `json:"details"`
}

// modificationRequest is a refund's or a capture's request: both name an amount.
type modificationRequest struct {
	Amount          amount `json:"amount"`
	MerchantAccount string `json:"merchantAccount"`
	Reference       string `json:"reference"`
}

type cancelRequest struct {
	MerchantAccount string `json:"merchantAccount"`
	Reference       string `json:"reference"`
}

// modificationAnswer is Adyen's answer to a refund, a capture or a cancellation it took (a
// cancellation's names no amount).
type modificationAnswer struct {
	MerchantAccount     string `json:"merchantAccount"`
	PaymentPSPReference string `json:"paymentPspReference"`
	PSPReference        string `json:"pspReference"`
	Reference           string `json:"reference"`
	Status              string `json:"status"`
	Amount              amount `json:"amount"`
}

// Charge makes a card payment, or only authorises it when req.CaptureManually. A refusal is a
// result, and so is Adyen's asking the shopper to authenticate first (RedirectShopper), which only
// a request with a ReturnURL makes possible: the result then carries the page to send them to,
// and Authenticated finishes it. Without a ReturnURL nothing of 3-D Secure is sent, and a card
// whose issuer wants it is Refused (38, Authentication required). An answer by which Adyen
// did nothing (resultCode Error, a 4xx, a 503) or a refused connection is provider.ErrUnavailable;
// a payment Adyen will settle later (Pending, Received), a request still in progress, another 5xx,
// a timeout or an answer that cannot be read leaves the outcome unknown.
func (c *Client) Charge(ctx context.Context, req provider.ChargeRequest) (provider.ChargeResult, error) {
	value, err := counting.Units(req.Amount)
	if err != nil {
		return provider.ChargeResult{}, err
	}
	request := paymentRequest{
		Amount: amount{Value: value, Currency: req.Amount.Currency}, Reference: req.PaymentID, MerchantAccount: c.MerchantAccount,
		PaymentMethod: paymentMethod{Type: "scheme", Number: req.Card.Number(), ExpiryMonth: fmt.Sprintf("%02d", req.Card.ExpMonth),
			ExpiryYear: strconv.Itoa(req.Card.ExpYear), CVC: req.Card.CVC(), HolderName: req.HolderName},
	}
	if req.ReturnURL != "" {
		request.redirectAuthentication = &redirectAuthentication{ReturnURL: req.ReturnURL, Channel: "Web", BrowserInfo: shopperBrowser,
			AuthenticationData:     authenticationData{ThreeDSRequestData: threeDSRequestData{NativeThreeDS: "disabled"}},
			RedirectToIssuerMethod: http.MethodGet, RedirectFromIssuerMethod: http.MethodGet}
	}
	if req.CaptureManually {
		// Adyen's per-payment manual capture: captureDelayHours only delays the automatic
		// capture, which would still happen without Paygate.
		request.AdditionalData = map[string]string{"manualCapture": "true"}
	}
	answer, err := c.post(ctx, "/v71/payments", req.PaymentID, request)
	if err != nil {
		return provider.ChargeResult{}, err
	}
	if answer.Status != http.StatusOK {
		return provider.ChargeResult{}, unsuccessful(answer)
	}
	payment, err := readPayment(answer.Body)
	if err != nil {
		return provider.ChargeResult{}, err
	}
	if payment.ResultCode == resultError {
		return provider.ChargeResult{}, answer.Failed("adyen (resultCode Error: " + payment.RefusalReason + ")")
	}
	return outcome(payment)
}

// Authenticated asks Adyen, through /payments/details with the redirectResult the shopper's browser
// brought back, what became of a payment that redirected the shopper. Without a redirectResult
// Adyen cannot be asked; an answer about another payment than req's, any other answer than 200,
// or one that cannot be read is an error, and the AUTHORISATION notification settles the payment.
func (c *Client) Authenticated(ctx context.Context, req provider.AuthenticationRequest) (provider.ChargeResult, error) {
	redirectResult := req.Returned.Get("redirectResult")
	if redirectResult == "" {
		return provider.ChargeResult{}, errors.New("adyen: the shopper came back without a redirectResult, which asking Adyen takes")
	}
	var request detailsRequest
	request.Details.RedirectResult = redirectResult
	// The same return asked about again is the same request: a retry Adyen answers as it did. The
	// key is within the 64 characters Adyen takes.
	hash := sha256.Sum256([]byte(redirectResult))
	answer, err := c.post(ctx, "/v71/payments/details", req.PaymentID+"-"+hex.EncodeToString(hash[:12]), request)
	if err != nil {
		return provider.ChargeResult{}, err
	}
	if answer.Status != http.StatusOK {
		return provider.ChargeResult{}, fmt.Errorf("adyen: /payments/details answered %d", answer.Status)
	}
	payment, err := readPayment(answer.Body)
	switch {
	case err != nil:
		return provider.ChargeResult{}, err
	case payment.MerchantReference != req.PaymentID:
		return provider.ChargeResult{}, fmt.Errorf("adyen: the redirectResult brought back for payment %s is payment %q's", req.PaymentID, payment.MerchantReference)
	case req.ProviderPaymentID != "" && payment.PSPReference != "" && payment.PSPReference != req.ProviderPaymentID:
		return provider.ChargeResult{}, fmt.Errorf("adyen: the redirectResult brought back for %s is %s's", req.ProviderPaymentID, payment.PSPReference)
	}
	return outcome(payment)
}

// readPayment reads the answer of /payments or /payments/details, which names the payment by its
// pspReference unless it redirects the shopper.
func readPayment(body []byte) (paymentAnswer, error) {
	var payment paymentAnswer
	if err := json.Unmarshal(body, &payment); err != nil || (payment.PSPReference == "" && payment.ResultCode != resultRedirectShopper) {
		return paymentAnswer{}, fmt.Errorf("adyen: unreadable payment (%d bytes)", len(body))
	}
	return payment, nil
}

// outcome is what a payment's resultCode says: authorised, refused, or waiting for the shopper on
// the page of a redirect by GET. A redirect by POST, which a browser can only be sent through with
// its form, is declined: Adyen holds nothing until the shopper authenticates, so nothing was charged.
// Any other resultCode (Pending, Received, Error, ...) leaves the outcome unknown.
func outcome(payment paymentAnswer) (provider.ChargeResult, error) {
	switch payment.ResultCode {
	case resultAuthorised: // charged, or for a manual capture authorised and held
		return provider.ChargeResult{ProviderPaymentID: payment.PSPReference, Approved: true}, nil
	case resultRefused:
		result := provider.ChargeResult{ProviderPaymentID: payment.PSPReference, DeclineCode: "card_declined",
			RawDeclineCode: payment.RefusalReasonCode, DeclineMessage: payment.RefusalReason}
		switch payment.RefusalReasonCode {
		case reasonNotEnoughBalance:
			result.DeclineCode = "insufficient_funds"
		case reasonExpiredCard:
			result.DeclineCode = "expired_card"
		}
		return result, nil
	case resultRedirectShopper:
		action := payment.Action
		switch {
		case action == nil || action.Type != "redirect" || action.URL == "":
			return provider.ChargeResult{}, errors.New("adyen: RedirectShopper without a page to redirect to, outcome unknown")
		case action.Method != "" && !strings.EqualFold(action.Method, http.MethodGet):
			// Declined, not failed over: once a provider asked for authentication, the payment
			// is never sent to another.
			return provider.ChargeResult{ProviderPaymentID: payment.PSPReference, DeclineCode: "card_declined",
				RawDeclineCode: resultRedirectShopper + " " + action.Method,
				DeclineMessage: "Adyen asks to redirect the shopper by " + action.Method + ", which Paygate cannot send a browser through."}, nil
		}
		return provider.ChargeResult{ProviderPaymentID: payment.PSPReference, RedirectURL: action.URL}, nil
	}
	return provider.ChargeResult{}, fmt.Errorf("adyen: payment %s is %s, outcome unknown", payment.PSPReference, payment.ResultCode)
}

// unsuccessful is the error an answer other than the one expected means: the outcome in doubt
// for a request still in progress (422 with errorCode 704) or a 5xx but 503; else a refusal by
// which Adyen did nothing.
func unsuccessful(answer provider.Answer) error {
	var refusal adyenError
	json.Unmarshal(answer.Body, &refusal)
	if answer.Indeterminate() || refusal.ErrorCode == errorInProgress {
		return fmt.Errorf("adyen: outcome unknown: answered %d %s", answer.Status, refusal.ErrorCode)
	}
	return answer.Refused("adyen (" + refusal.ErrorCode + ")")
}

// Refund asks for part or all of a payment back. Adyen takes it ("received") and says later, by
// a REFUND or REFUND_FAILED notification, whether it went through.
func (c *Client) Refund(ctx context.Context, req provider.RefundRequest) (provider.RefundResult, error) {
	value, err := counting.Units(req.Amount)
	if err != nil {
		return provider.RefundResult{}, err
	}
	refund, err := c.modify(ctx, req.ProviderPaymentID, "refunds", req.RefundID, modificationRequest{
		Amount: amount{Value: value, Currency: req.Amount.Currency}, MerchantAccount: c.MerchantAccount, Reference: req.RefundID,
	})
	if err != nil {
		return provider.RefundResult{}, err
	}
	return provider.RefundResult{ProviderRefundID: refund, Pending: true}, nil
}

// Capture captures part or all of an authorisation made to capture manually; Adyen releases the
// rest. Adyen takes it ("received") and says later, by a CAPTURE or CAPTURE_FAILED notification,
// whether it went through. A capture Adyen refuses at once (a 422: more than the authorisation,
// an authorisation already captured or canceled) is provider.ErrUnavailable.
func (c *Client) Capture(ctx context.Context, req provider.CaptureRequest) (provider.CaptureResult, error) {
	value, err := counting.Units(req.Amount)
	if err != nil {
		return provider.CaptureResult{}, err
	}
	if _, err := c.modify(ctx, req.ProviderPaymentID, "captures", req.IdempotencyKey, modificationRequest{
		Amount: amount{Value: value, Currency: req.Amount.Currency}, MerchantAccount: c.MerchantAccount, Reference: req.PaymentID,
	}); err != nil {
		return provider.CaptureResult{}, err
	}
	return provider.CaptureResult{Pending: true}, nil
}

// Cancel voids an authorisation made to capture manually. Adyen takes it ("received") and says
// later, by a CANCELLATION notification, whether it went through; it takes no reason, so
// req.Reason stays Paygate's. A cancellation Adyen refuses at once (a 422: the authorisation
// captured, or canceled already) is provider.ErrUnavailable. A payment awaiting the shopper has no
// pspReference yet: Adyen has authorised nothing, and has no request that cancels it (it lets it
// expire; a shopper who completes the authentication still gets it authorised, which its
// AUTHORISATION notification tells), so its cancellation is provider.ErrNothingToCancel, unsent.
func (c *Client) Cancel(ctx context.Context, req provider.CancelRequest) (provider.CancelResult, error) {
	if req.ProviderPaymentID == "" {
		return provider.CancelResult{}, fmt.Errorf("%w: adyen: no pspReference to cancel for %s", provider.ErrNothingToCancel, req.PaymentID)
	}
	if _, err := c.modify(ctx, req.ProviderPaymentID, "cancels", req.IdempotencyKey, cancelRequest{
		MerchantAccount: c.MerchantAccount, Reference: req.PaymentID,
	}); err != nil {
		return provider.CancelResult{}, err
	}
	return provider.CancelResult{Pending: true}, nil
}

// modify sends a modification (refunds, captures, cancels) of the payment pspReference, which
// Adyen takes with 201 and status "received", and returns the modification's own pspReference.
// Its errors are Charge's: a refusal by which Adyen did nothing is provider.ErrUnavailable.
func (c *Client) modify(ctx context.Context, pspReference, modification, idempotencyKey string, body any) (string, error) {
	if pspReference == "" {
		// A payment awaiting the shopper has no pspReference yet, and holds nothing to capture or
		// refund.
		return "", fmt.Errorf("%w: adyen: no pspReference for %s: the payment awaits the shopper's authentication", provider.ErrUnavailable, modification)
	}
	answer, err := c.post(ctx, "/v71/payments/"+url.PathEscape(pspReference)+"/"+modification, idempotencyKey, body)
	if err != nil {
		return "", err
	}
	if answer.Status != http.StatusCreated {
		return "", unsuccessful(answer)
	}
	var taken modificationAnswer
	if err := json.Unmarshal(answer.Body, &taken); err != nil || taken.PSPReference == "" || taken.Status != "received" {
		return "", fmt.Errorf("adyen: unreadable answer to %s (%d bytes)", modification, len(answer.Body))
	}
	return taken.PSPReference, nil
}

// post sends body as JSON to path with the idempotency key.
func (c *Client) post(ctx context.Context, path, idempotencyKey string, body any) (provider.Answer, error) {
	header := http.Header{"X-Api-Key": {c.APIKey}, "Idempotency-Key": {idempotencyKey}}
	return c.Caller.PostJSON(ctx, strings.TrimSuffix(c.BaseURL, "/")+path, header, body)
}
