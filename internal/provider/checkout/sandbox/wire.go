package sandbox

import "time"

// The sandbox reads and writes Checkout.com's shapes with types of its own, not the adapter's:
// it is the other side of the wire, so a field the adapter names wrongly fails its tests.

// Response codes and statuses of Checkout.com's that the sandbox answers with.
const (
	codeApproved          = "10000"
	codeInsufficientFunds = "20051"
	codeExpiredCard       = "20054"
	statusAuthorized      = "Authorized"
	statusCaptured        = "Captured"
	statusVoided          = "Voided"
	statusDeclined        = "Declined"
	// A payment waiting for the shopper to authenticate (3-D Secure).
	statusPending = "Pending"
)

type source struct {
	Type        string `json:"type"`
	Number      string `json:"number"`
	ExpiryMonth int    `json:"expiry_month"`
	ExpiryYear  int    `json:"expiry_year"`
	CVV         string `json:"cvv"`
}

type paymentRequest struct {
	Source    source `json:"source"`
	Amount    int64  `json:"amount"`
	Currency  string `json:"currency"`
	Reference string `json:"reference"`
	// Capture is true when left out.
	Capture     *bool          `json:"capture"`
	Description string         `json:"description,omitempty"`
	Metadata    map[string]any `json:"metadata,omitempty"`
	ThreeDS     *threeDS       `json:"3ds"`
	// SuccessURL and FailureURL are where the browser goes back to once the shopper
	// authenticated: the first when the payment is approved, the second when it is not.
	SuccessURL string `json:"success_url"`
	FailureURL string `json:"failure_url"`
}

// threeDS asks for 3-D Secure where the card's issuer wants it.
type threeDS struct {
	Enabled bool `json:"enabled"`
}

// pendingAnswer is the answer to a payment that waits for the shopper to authenticate (202).
type pendingAnswer struct {
	ID        string `json:"id"`
	Status    string `json:"status"`
	Reference string `json:"reference"`
	Links     links  `json:"_links"`
}

// links are a payment's addresses by name, as Checkout.com gives them: its redirect while it
// waits for the shopper.
type links map[string]link

type link struct {
	Href string `json:"href"`
}

type paymentAnswer struct {
	ID              string   `json:"id"`
	ActionID        string   `json:"action_id"`
	Amount          int64    `json:"amount"`
	Currency        string   `json:"currency"`
	Approved        bool     `json:"approved"`
	Status          string   `json:"status"`
	ResponseCode    string   `json:"response_code"`
	ResponseSummary string   `json:"response_summary"`
	Reference       string   `json:"reference"`
	Balances        balances `json:"balances"`
}

// balances are a payment's running totals, in units of its currency.
type balances struct {
	TotalAuthorized    int64 `json:"total_authorized"`
	TotalVoided        int64 `json:"total_voided"`
	AvailableToVoid    int64 `json:"available_to_void"`
	TotalCaptured      int64 `json:"total_captured"`
	AvailableToCapture int64 `json:"available_to_capture"`
	TotalRefunded      int64 `json:"total_refunded"`
	AvailableToRefund  int64 `json:"available_to_refund"`
}

type refundRequest struct {
	Amount    int64  `json:"amount"`
	Reference string `json:"reference"`
}

// captureRequest captures an authorisation; the whole of it when the amount is left out.
type captureRequest struct {
	Amount    int64  `json:"amount"`
	Reference string `json:"reference"`
}

type voidRequest struct {
	Reference string `json:"reference"`
}

// actionAnswer is the answer to an action taken to process later: a refund, a capture, a void.
type actionAnswer struct {
	ActionID  string `json:"action_id"`
	Reference string `json:"reference"`
}

// payment is a payment as Checkout.com's look-ups show it.
type payment struct {
	ID          string         `json:"id"`
	RequestedOn time.Time      `json:"requested_on"`
	Amount      int64          `json:"amount"`
	Currency    string         `json:"currency"`
	Reference   string         `json:"reference"`
	Approved    bool           `json:"approved"`
	Status      string         `json:"status"`
	Balances    balances       `json:"balances"`
	Metadata    map[string]any `json:"metadata,omitempty"`
	Links       links          `json:"_links,omitempty"`
}

// paymentList is a page of the payments made under one reference, newest first.
type paymentList struct {
	Limit      int       `json:"limit"`
	Skip       int       `json:"skip"`
	TotalCount int       `json:"total_count"`
	Data       []payment `json:"data"`
}

// action is a step in a payment's life (its authorization, its capture or void, a refund) as
// Checkout.com lists it.
type action struct {
	ID          string    `json:"id"`
	Type        string    `json:"type"`
	ProcessedOn time.Time `json:"processed_on"`
	Amount      int64     `json:"amount"`
	// Approved is whether the step went through; a step without it has no outcome yet.
	Approved        *bool  `json:"approved,omitempty"`
	ResponseCode    string `json:"response_code,omitempty"`
	ResponseSummary string `json:"response_summary,omitempty"`
	Reference       string `json:"reference,omitempty"`
}

// Action types the sandbox lists.
const (
	actionAuthorization = "Authorization"
	actionCapture       = "Capture"
	actionVoid          = "Void"
	actionRefund        = "Refund"
)
