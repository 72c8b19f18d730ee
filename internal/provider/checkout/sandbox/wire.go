package sandbox

import "time"

// The sandbox reads and writes Checkout.com's shapes with types of its own, not the adapter's:
// it is the other side of the wire, so a field the adapter names wrongly fails its tests.

// Response codes and statuses of Checkout.com's that the sandbox answers with.
const (
	codeApproved          = "10000"
	codeInsufficientFunds = "20051"
	codeExpiredCard       = "20054"
	statusCaptured        = "Captured"
)

type source struct {
	Type        string `json:"type"`
	Number      string `json:"number"`
	ExpiryMonth int    `json:"expiry_month"`
	ExpiryYear  int    `json:"expiry_year"`
	CVV         string `json:"cvv"`
}

type paymentRequest struct {
	Source      source `json:"source"`
	Amount      int64  `json:"amount"`
	Currency    string `json:"currency"`
	Reference   string `json:"reference"`
	Capture     bool   `json:"capture"`
	Description string `json:"description,omitempty"`
}

type paymentAnswer struct {
	ID              string `json:"id"`
	ActionID        string `json:"action_id"`
	Amount          int64  `json:"amount"`
	Currency        string `json:"currency"`
	Approved        bool   `json:"approved"`
	Status          string `json:"status"`
	ResponseCode    string `json:"response_code"`
	ResponseSummary string `json:"response_summary"`
	Reference       string `json:"reference"`
}

type refundRequest struct {
	Amount    int64  `json:"amount"`
	Reference string `json:"reference"`
}

type refundAnswer struct {
	ActionID  string `json:"action_id"`
	Reference string `json:"reference"`
}

// payment is a payment as Checkout.com's look-ups show it.
type payment struct {
	ID          string    `json:"id"`
	RequestedOn time.Time `json:"requested_on"`
	Amount      int64     `json:"amount"`
	Currency    string    `json:"currency"`
	Reference   string    `json:"reference"`
	Approved    bool      `json:"approved"`
	Status      string    `json:"status"`
}

// paymentList is a page of the payments made under one reference, newest first.
type paymentList struct {
	Limit      int       `json:"limit"`
	Skip       int       `json:"skip"`
	TotalCount int       `json:"total_count"`
	Data       []payment `json:"data"`
}

// action is a step in a payment's life (its authorization, a refund) as Checkout.com lists it.
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

// Action types Paygate reads.
const (
	actionAuthorization = "Authorization"
	actionRefund        = "Refund"
)
