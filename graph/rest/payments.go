package rest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/paygate/paygate/internal/paging"

	"github.com/paygate/paygate/ent"
	"github.com/paygate/paygate/graph"
	"github.com/paygate/paygate/graph/model"
	"github.com/paygate/paygate/internal/apierror"
	"github.com/paygate/paygate/internal/card"
	"github.com/paygate/paygate/internal/money"
	"github.com/paygate/paygate/internal/payment"
	"github.com/paygate/paygate/internal/state"
	"github.com/paygate/paygate/internal/web"
)

type createPaymentRequest struct {
	Amount        decimalField      `json:"amount"`
	Currency      string            `json:"currency"`
	PaymentMethod string            `json:"payment_method"`
	Customer      *customerRequest  `json:"customer"`
	Card          *cardRequest      `json:"card"`
	Description   *string           `json:"description"`
	Metadata      map[string]string `json:"metadata"`
	CaptureMethod *string           `json:"capture_method"`
	ReturnURL     *string           `json:"return_url"`
}

type customerRequest struct {
	Email string  `json:"email"`
	Name  *string `json:"name"`
}

// cardRequest's months and years are pointers: one left out is missing, a 0 sent is no month.
type cardRequest struct {
	Number   string `json:"number"`
	ExpMonth *int   `json:"exp_month"`
	ExpYear  *int   `json:"exp_year"`
	CVC      string `json:"cvc"`
}

// decimalField takes an amount as a JSON number (49.99) or string ("49.99") and keeps its text,
// so it never passes through floating point.
type decimalField money.Decimal

func (d *decimalField) UnmarshalJSON(raw []byte) error {
	var text string
	switch {
	case bytes.Equal(raw, []byte("null")):
	case len(raw) > 0 && raw[0] == '"':
		if err := json.Unmarshal(raw, &text); err != nil {
			return err
		}
	case len(raw) > 0 && (raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9'):
		text = string(raw)
	default:
		return &fieldError{apierror.ForParam(apierror.InvalidAmount, "amount", "amount must be a number such as 49.99")}
	}
	*d = decimalField(text)
	return nil
}

func valueOr0(n *int) int {
	if n == nil {
		return 0
	}
	return *n
}

// CreatePayment is POST /api/v1/payments.
func (h *Handlers) CreatePayment(w http.ResponseWriter, r *http.Request) {
	var req createPaymentRequest
	if err := decode(r, &req); err != nil {
		web.WriteError(w, r, err, nil)
		return
	}
	ctx, key, finish := keyedCall(r)
	input := model.CreatePaymentInput{
		IdempotencyKey: key,
		Amount:         money.Decimal(req.Amount),
		Currency:       req.Currency,
		PaymentMethod:  card.PaymentMethod(req.PaymentMethod),
		Customer:       &model.CustomerInput{},
		Description:    req.Description,
		Metadata:       req.Metadata,
		ReturnURL:      req.ReturnURL,
	}
	if req.Customer != nil {
		input.Customer = &model.CustomerInput{Email: req.Customer.Email, Name: req.Customer.Name}
	}
	if req.CaptureMethod != nil {
		method := state.CaptureMethod(*req.CaptureMethod)
		if !slices.Contains(method.Values(), *req.CaptureMethod) {
			web.WriteError(w, r, apierror.ForParam(apierror.InvalidRequest, "capture_method", "capture_method must be automatic or manual"), nil)
			return
		}
		input.CaptureMethod = &method
	}
	if c := req.Card; c != nil {
		for _, field := range []struct {
			param string
			value *int
		}{{"card.exp_month", c.ExpMonth}, {"card.exp_year", c.ExpYear}} {
			if field.value == nil && c.Number != "" { // a card without a number is told that first
				web.WriteError(w, r, apierror.ForParam(apierror.MissingField, field.param, field.param+" is required"), nil)
				return
			}
		}
		input.Card = &model.CardInput{Number: c.Number, ExpMonth: valueOr0(c.ExpMonth), ExpYear: valueOr0(c.ExpYear), Cvc: c.CVC}
	}
	p, err := h.mutation.CreatePayment(ctx, input)
	err = finish(w, err)
	if err != nil {
		web.WriteError(w, r, err, nil)
		return
	}
	if p.Status == state.PaymentFailed && p.FailureCode != nil {
		// The payment exists, failed: the error rides with it, as Stripe answers a decline.
		web.WriteError(w, r, apierror.New(apierror.Code(*p.FailureCode), *p.FailureMessage), payment.ObjectOf(p))
		return
	}
	status := http.StatusCreated
	if p.Status == state.PaymentProcessing {
		// The provider's answer was lost: the payment is made, its outcome not yet known.
		status = http.StatusAccepted
	}
	web.WriteJSON(w, status, payment.ObjectOf(p))
}

// maxReturnedQuery bounds the query a shopper's browser brings back from a provider's page: it is
// passed on to the provider, and Adyen's redirectResult, the longest, is a few kilobytes at most.
const maxReturnedQuery = 8 << 10

// ShopperReturned is GET /api/v1/payments/{id}/return: the shopper's browser, back from
// authenticating at the provider with the payment's return secret in the query. The payment is
// settled as the provider says, and the browser sent on (303) to the merchant's return_url with
// payment_id and status; without the secret the payment is not found.
func (h *Handlers) ShopperReturned(w http.ResponseWriter, r *http.Request) {
	if len(r.URL.RawQuery) > maxReturnedQuery {
		web.WriteError(w, r, apierror.New(apierror.InvalidRequest, fmt.Sprintf("the query string must be at most %d bytes", maxReturnedQuery)), nil)
		return
	}
	p, err := h.shopperReturned(r.Context(), r.PathValue("id"), r.URL.Query())
	if err != nil {
		web.WriteError(w, r, err, nil)
		return
	}
	http.Redirect(w, r, payment.ReturnTo(p), http.StatusSeeOther)
}

type captureRequest struct {
	Amount refundAmountField `json:"amount"`
}

// CapturePayment is POST /api/v1/payments/{id}/capture: 200 with the payment captured, or 202
// while its provider confirms the capture or its answer was lost.
func (h *Handlers) CapturePayment(w http.ResponseWriter, r *http.Request) {
	var req captureRequest
	if err := decodeOptional(r, &req); err != nil { // no body captures all of it
		web.WriteError(w, r, err, nil)
		return
	}
	ctx, key, finish := keyedCall(r)
	input := model.CapturePaymentInput{PaymentID: r.PathValue("id"), IdempotencyKey: key}
	if req.Amount.text != nil {
		amount := money.Decimal(*req.Amount.text)
		input.Amount = &amount
	}
	p, err := h.mutation.CapturePayment(ctx, input)
	err = finish(w, err)
	writeSettling(w, r, p, err)
}

type cancelRequest struct {
	Reason *string `json:"reason"`
}

// CancelPayment is POST /api/v1/payments/{id}/cancel: 200 with the payment canceled, or 202
// while its provider's answer is awaited.
func (h *Handlers) CancelPayment(w http.ResponseWriter, r *http.Request) {
	var req cancelRequest
	if err := decodeOptional(r, &req); err != nil {
		web.WriteError(w, r, err, nil)
		return
	}
	ctx, key, finish := keyedCall(r)
	input := model.CancelPaymentInput{PaymentID: r.PathValue("id"), IdempotencyKey: key}
	if req.Reason != nil {
		reason := state.CancellationReason(*req.Reason)
		if !slices.Contains(reason.Values(), *req.Reason) {
			web.WriteError(w, r, apierror.ForParam(apierror.InvalidRequest, "reason", "reason must be requested_by_customer, duplicate or fraudulent"), nil)
			return
		}
		input.Reason = &reason
	}
	p, err := h.mutation.CancelPayment(ctx, input)
	err = finish(w, err)
	writeSettling(w, r, p, err)
}

// writeSettling answers a capture or cancellation: the payment, 200 once settled, 202 while a
// provider's answer is awaited.
func writeSettling(w http.ResponseWriter, r *http.Request, p *ent.Payment, err error) {
	if err != nil {
		web.WriteError(w, r, err, nil)
		return
	}
	status := http.StatusOK
	if p.Status == state.PaymentProcessing || p.PendingAction != nil {
		status = http.StatusAccepted
	}
	web.WriteJSON(w, status, payment.ObjectOf(p))
}

// GetPayment is GET /api/v1/payments/{id}.
func (h *Handlers) GetPayment(w http.ResponseWriter, r *http.Request) {
	ctx := graph.WithStatusHistory(r.Context())
	p, err := h.query.Payment(ctx, r.PathValue("id"))
	if err != nil {
		web.WriteError(w, r, err, nil)
		return
	}
	history, err := h.payment.StatusHistory(ctx, p)
	if err != nil {
		web.WriteError(w, r, err, nil)
		return
	}
	body := payment.ObjectOf(p)
	body.StatusHistory = make([]payment.StatusChange, 0, len(history))
	for _, change := range history {
		body.StatusHistory = append(body.StatusHistory, payment.StatusChange{
			From: change.From, To: change.To, Reason: change.Reason, Actor: change.Actor, At: payment.TimestampOf(change.At),
		})
	}
	web.WriteJSON(w, http.StatusOK, body)
}

// listParams are the query parameters of GET /api/v1/payments.
var listParams = []string{"limit", "starting_after", "ending_before", "status", "currency", "created_gte", "created_lte",
	"customer_email", "amount_gte", "amount_lte"}

// listFilter reads the filter parameters into the GraphQL twin's where input.
func listFilter(q url.Values) (*ent.PaymentWhereInput, error) {
	if err := knownParams(q, listParams...); err != nil {
		return nil, err
	}
	where := &ent.PaymentWhereInput{}
	if text := q.Get("status"); text != "" {
		status := state.PaymentStatus(text)
		if !slices.Contains(status.Values(), text) {
			return nil, apierror.ForParam(apierror.InvalidRequest, "status", "status must be one of "+strings.Join(status.Values(), ", "))
		}
		where.Status = &status
	}
	if text := q.Get("currency"); text != "" {
		code, err := money.ParseCurrency(text)
		if err != nil {
			return nil, apierror.ForParam(apierror.InvalidCurrency, "currency", err.Error())
		}
		where.Currency = &code
	}
	for param, into := range map[string]**time.Time{"created_gte": &where.CreatedAtGTE, "created_lte": &where.CreatedAtLTE} {
		if text := q.Get(param); text != "" {
			t, err := readTime(param, text)
			if err != nil {
				return nil, err
			}
			*into = &t
		}
	}
	if email := q.Get("customer_email"); email != "" {
		if utf8.RuneCountInString(email) > paging.MaxFilterText {
			return nil, apierror.ForParam(apierror.InvalidRequest, "customer_email", fmt.Sprintf("customer_email is longer than %d characters", paging.MaxFilterText))
		}
		where.CustomerEmail = &email
	}
	// Amounts are decimals of one currency, so an amount filter needs the currency.
	for param, into := range map[string]**int64{"amount_gte": &where.AmountGTE, "amount_lte": &where.AmountLTE} {
		if text := q.Get(param); text != "" {
			if where.Currency == nil {
				return nil, apierror.ForParam(apierror.MissingField, "currency", param+" needs currency, since amounts are in a currency")
			}
			amount, err := money.Parse(text, *where.Currency)
			if err != nil {
				return nil, apierror.ForParam(apierror.InvalidAmount, param, err.Error())
			}
			*into = &amount.Minor
		}
	}
	return where, nil
}

// MaxTimeText bounds a time a client writes, in characters: an RFC 3339 time with nanoseconds
// and an offset (2006-01-02T15:04:05.999999999-07:00) has 35.
const MaxTimeText = 35

// checkTimeText refuses a time's text, at param, longer than any time is written; time.Parse
// would read any number of digits of a second's fraction.
func checkTimeText(param, text string) error {
	if utf8.RuneCountInString(text) > MaxTimeText {
		return apierror.ForParam(apierror.InvalidRequest, param, fmt.Sprintf("%s is longer than %d characters, which no time is", param, MaxTimeText))
	}
	return nil
}

// readTime reads a time filter, param: Unix seconds (Stripe's created filters) or an RFC 3339
// time.
func readTime(param, text string) (time.Time, error) {
	if err := checkTimeText(param, text); err != nil {
		return time.Time{}, err
	}
	t, err := time.Parse(time.RFC3339Nano, text)
	if seconds, intErr := strconv.ParseInt(text, 10, 64); intErr == nil {
		t, err = time.Unix(seconds, 0).UTC(), nil
	}
	// Beyond what the databases keep, a filter would fail the query, not match nothing.
	if err != nil || t.Year() < 1 || t.Year() > 9999 {
		return time.Time{}, apierror.ForParam(apierror.InvalidRequest, param, param+" must be an RFC 3339 time or Unix seconds, of the years 1 to 9999")
	}
	return t, nil
}

// ListPayments (GET /api/v1/payments) pages newest first, Stripe style: limit (1-100, default 20), starting_after (the
// page after this payment) or ending_before (the page before it), and has_more; filters narrow
// the list as the GraphQL twin's where does.
func (h *Handlers) ListPayments(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	where, err := listFilter(q)
	if err != nil {
		web.WriteError(w, r, err, nil)
		return
	}
	page, err := readPage(r, paging.DefaultPageSize, paging.MaxPageSize, h.cursorAt)
	if err != nil {
		web.WriteError(w, r, err, nil)
		return
	}
	conn, err := h.query.Payments(r.Context(), page.after, page.first, page.before, page.last, payment.NewestFirst, where)
	if err != nil {
		web.WriteError(w, r, err, nil)
		return
	}
	data := make([]payment.Object, 0, len(conn.Edges))
	for _, edge := range conn.Edges {
		data = append(data, payment.ObjectOf(edge.Node))
	}
	web.WriteList(w, data, page.hasMore(conn.PageInfo))
}

func utcOrNil(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	utc := t.UTC()
	return &utc
}
