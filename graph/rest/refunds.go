package rest

import (
	"bytes"
	"context"
	"net/http"
	"slices"

	"github.com/paygate/paygate/internal/paging"

	"github.com/paygate/paygate/ent"
	"github.com/paygate/paygate/graph/model"
	"github.com/paygate/paygate/internal/apierror"
	"github.com/paygate/paygate/internal/money"
	"github.com/paygate/paygate/internal/payment"
	"github.com/paygate/paygate/internal/state"
	"github.com/paygate/paygate/internal/web"
)

type refundRequest struct {
	Amount refundAmountField `json:"amount"`
	Reason *string           `json:"reason"`
}

// refundAmountField is a refund's amount. Left out, the refund is of all that is left; null is
// refused, as a client that meant an amount and lost it must not refund everything.
type refundAmountField struct {
	text *decimalField
}

func (a *refundAmountField) UnmarshalJSON(raw []byte) error {
	if bytes.Equal(raw, []byte("null")) {
		return &fieldError{apierror.ForParam(apierror.InvalidAmount, "amount", "amount must be a number such as 10.00; leave it out to refund all that is left")}
	}
	a.text = new(decimalField)
	return a.text.UnmarshalJSON(raw)
}

// RefundPayment is POST /api/v1/payments/{id}/refunds.
func (h *Handlers) RefundPayment(w http.ResponseWriter, r *http.Request) {
	var req refundRequest
	if err := decodeOptional(r, &req); err != nil { // no body refunds all that is left
		web.WriteError(w, r, err, nil)
		return
	}
	ctx, key, finish := keyedCall(r)
	input := model.RefundPaymentInput{PaymentID: r.PathValue("id"), Reason: req.Reason, IdempotencyKey: key}
	if req.Amount.text != nil { // absent refunds the rest
		amount := money.Decimal(*req.Amount.text)
		input.Amount = &amount
	}
	refund, err := h.mutation.RefundPayment(ctx, input)
	err = finish(w, err)
	if err != nil {
		web.WriteError(w, r, err, nil)
		return
	}
	if refund.Status == state.RefundFailed && refund.FailureCode != nil {
		web.WriteError(w, r, apierror.New(apierror.Code(*refund.FailureCode), "the provider could not refund the payment; nothing was refunded"), payment.RefundObjectOf(refund))
		return
	}
	web.WriteJSON(w, http.StatusCreated, payment.RefundObjectOf(refund))
}

// ListRefunds is GET /api/v1/payments/{id}/refunds.
func (h *Handlers) ListRefunds(w http.ResponseWriter, r *http.Request) {
	if err := knownParams(r.URL.Query(), "limit", "starting_after", "ending_before"); err != nil {
		web.WriteError(w, r, err, nil)
		return
	}
	p, err := h.query.Payment(r.Context(), r.PathValue("id"))
	if err != nil {
		web.WriteError(w, r, err, nil)
		return
	}
	// A payment has at most payment.MaxRefunds refunds: they are read whole, oldest first, and
	// paged here, by id, as every other list pages.
	refunds, err := h.payment.Refunds(r.Context(), p)
	if err != nil {
		web.WriteError(w, r, err, nil)
		return
	}
	position := func(id string) int {
		return slices.IndexFunc(refunds, func(refund *ent.Refund) bool { return refund.ID == id })
	}
	page, err := readPage(r, paging.DefaultPageSize, paging.MaxPageSize, func(_ context.Context, id, param string) (*ent.Cursor, error) {
		if position(id) < 0 {
			return nil, apierror.ForParam(apierror.InvalidRequest, param, "no refund of this payment has the id "+id)
		}
		return &ent.Cursor{ID: id}, nil
	})
	if err != nil {
		web.WriteError(w, r, err, nil)
		return
	}
	var shown []*ent.Refund
	hasMore := false
	switch {
	case page.before != nil:
		end := position(page.before.ID)
		start := max(end-*page.last, 0)
		shown, hasMore = refunds[start:end], start > 0
	default:
		start := 0
		if page.after != nil {
			start = position(page.after.ID) + 1
		}
		end := min(start+*page.first, len(refunds))
		shown, hasMore = refunds[start:end], end < len(refunds)
	}
	data := make([]payment.RefundObject, 0, len(shown))
	for _, refund := range shown {
		data = append(data, payment.RefundObjectOf(refund))
	}
	web.WriteList(w, data, hasMore)
}
