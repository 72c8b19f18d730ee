package payment_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/tenant"

	"github.com/paygate/paygate/internal/paging"

	"github.com/paygate/paygate/ent"
	"github.com/paygate/paygate/ent/paymentstatuschange"
	"github.com/paygate/paygate/internal/apierror"
	"github.com/paygate/paygate/internal/auth"
	"github.com/paygate/paygate/internal/database"
	"github.com/paygate/paygate/internal/database/databasetest"
	"github.com/paygate/paygate/internal/money"
	"github.com/paygate/paygate/internal/payment"
	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/provider/providertest"
	"github.com/paygate/paygate/internal/state"
)

// TestRefundsPerPaymentAreBounded: a payment takes MaxRefunds refunds and no more, so its list
// of refunds (and its status history) has a known length.
func TestRefundsPerPaymentAreBounded(t *testing.T) {
	db := databasetest.SQLite(t)
	ctx := allowed()
	svc := newService(db, providertest.Memory{}, 99999999)
	p, err := svc.Create(ctx, validInput())
	if err != nil {
		t.Fatal(err)
	}
	one := money.Decimal("0.01")
	for i := range payment.MaxRefunds {
		if _, err := svc.Refund(ctx, payment.RefundInput{PaymentID: p.ID, Amount: &one}); err != nil {
			t.Fatalf("refund %d: %v", i+1, err)
		}
	}
	_, err = svc.Refund(ctx, payment.RefundInput{PaymentID: p.ID, Amount: &one})
	if !hasCode(err, apierror.InvalidState) {
		t.Fatalf("refund %d = %v, want invalid_state", payment.MaxRefunds+1, err)
	}
	p, err = svc.Get(ctx, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	refunds, _ := p.QueryRefunds().Count(ctx)
	history, _ := p.QueryStatusHistory().Count(ctx)
	if refunds != payment.MaxRefunds || history > payment.MaxStatusChanges || p.AmountRefunded != payment.MaxRefunds {
		t.Errorf("%d refunds, %d status changes, %d refunded; want %d, at most %d, %d",
			refunds, history, p.AmountRefunded, payment.MaxRefunds, payment.MaxStatusChanges, payment.MaxRefunds)
	}
}

// TestFilterBounds: a where over its bounds is a client's invalid_request naming the field, and
// the largest where within them is a query both databases answer.
func TestFilterBounds(t *testing.T) {
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		svc := newService(db, providertest.Memory{}, 99999999)
		list := func(where *ent.PaymentWhereInput) error {
			_, err := svc.List(allowed(), nil, nil, nil, nil, nil, where)
			return err
		}
		nested := func(depth int) *ent.PaymentWhereInput {
			status := state.PaymentFailed
			where := &ent.PaymentWhereInput{Status: &status}
			for range depth - 1 {
				where = &ent.PaymentWhereInput{Not: where}
			}
			return where
		}
		terms := func(n int) []*ent.PaymentWhereInput {
			or := make([]*ent.PaymentWhereInput, n)
			for i := range or {
				status := state.PaymentSucceeded
				or[i] = &ent.PaymentWhereInput{Status: &status}
			}
			return or
		}
		emails := func(n int) []string {
			list := make([]string, n)
			for i := range list {
				list[i] = fmt.Sprintf("customer%d@example.com", i)
			}
			return list
		}
		long := strings.Repeat("x", paging.MaxFilterText+1)
		for _, tc := range []struct {
			name  string
			where *ent.PaymentWhereInput
			param string
		}{
			{"or of 5000", &ent.PaymentWhereInput{Or: terms(5000)}, "where.or"},
			{"and of 51", &ent.PaymentWhereInput{And: terms(paging.MaxFilterTerms)}, "where.and"},
			{"not 2000 deep", nested(2000), "where" + strings.Repeat(".not", paging.MaxFilterDepth)},
			{"40000 emails", &ent.PaymentWhereInput{CustomerEmailIn: emails(40000)}, "where.customerEmailIn"},
			{"empty not", &ent.PaymentWhereInput{Not: &ent.PaymentWhereInput{}}, "where.not"},
			{"empty or", &ent.PaymentWhereInput{Or: []*ent.PaymentWhereInput{{}}}, "where.or"},
			{"long email", &ent.PaymentWhereInput{Or: []*ent.PaymentWhereInput{{CustomerEmailContains: &long}}}, "where.or.customerEmailContains"},
		} {
			code, param := codeAndParam(list(tc.where))
			if code != apierror.InvalidRequest || param != tc.param {
				t.Errorf("%s: %s %s, want invalid_request %s", tc.name, code, param, tc.param)
			}
		}

		// The most a filter may hold: deepest nesting, most terms, most values (one status in the
		// innermost not, one per term of or, the emails and one more).
		largest := nested(paging.MaxFilterDepth)
		largest.Or = terms(paging.MaxFilterTerms - paging.MaxFilterDepth)
		largest.CustomerEmailNotIn = emails(paging.MaxFilterValues - 1 - len(largest.Or) - 1)
		email := strings.Repeat("y", paging.MaxFilterText)
		largest.CustomerEmailNEQ = &email
		if err := list(largest); err != nil {
			t.Errorf("the largest filter within the bounds = %v", err)
		}
		largest.ProviderNEQ = &email
		if code, _ := codeAndParam(list(largest)); code != apierror.InvalidRequest {
			t.Errorf("one value over = %v, want invalid_request", code)
		}
	})
}

// TestServicesAuthoriseEveryCall: whichever surface or path leads to it, a service call of a
// principal that may not ask the operation is refused before anything is read or written.
func TestServicesAuthoriseEveryCall(t *testing.T) {
	db := databasetest.SQLite(t)
	svc := newService(db, providertest.Memory{}, 99999999)
	p, err := svc.Create(allowed(), validInput())
	if err != nil {
		t.Fatal(err)
	}
	calls := map[string]func(context.Context) error{
		"create": func(ctx context.Context) error { _, err := svc.Create(ctx, validInput()); return err },
		"refund": func(ctx context.Context) error {
			_, err := svc.Refund(ctx, payment.RefundInput{PaymentID: p.ID})
			return err
		},
		"get":        func(ctx context.Context) error { _, err := svc.Get(ctx, p.ID); return err },
		"get refund": func(ctx context.Context) error { _, err := svc.GetRefund(ctx, "re_x"); return err },
		"list": func(ctx context.Context) error {
			_, err := svc.List(ctx, nil, nil, nil, nil, nil, nil)
			return err
		},
		"cursor": func(ctx context.Context) error { _, err := svc.CursorAt(ctx, p.ID, "starting_after"); return err },
	}
	scopeless := auth.WithPrincipal(context.Background(), auth.Principal{Subject: "usr_none", UserID: "usr_none", Merchant: tenant.DefaultMerchant, Home: tenant.DefaultMerchant})
	for name, call := range calls {
		if err := call(context.Background()); !hasCode(err, apierror.Unauthenticated) {
			t.Errorf("%s without a principal = %v", name, err)
		}
		if err := call(scopeless); !hasCode(err, apierror.Forbidden) {
			t.Errorf("%s without the scope = %v", name, err)
		}
	}
	if n, _ := db.Ent.Payment.Query().Count(databasetest.AsMerchant()); n != 1 {
		t.Errorf("%d payments after refused calls, want 1", n)
	}
	if p, _ := svc.Get(allowed(), p.ID); p.AmountRefunded != 0 {
		t.Errorf("refunded %d by refused calls", p.AmountRefunded)
	}
}

// TestLongestStatusHistory drives a payment along the longest path MaxStatusChanges derives for
// one none of whose captures was given back: created, sent, the shopper asked to authenticate
// and back, authorised, captured, then refunded in MaxRefunds parts. Its history is
// MaxStatusChanges long, which GraphQL's cost estimate relies on.
func TestLongestStatusHistory(t *testing.T) {
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		ctx := allowed()
		svc := newClockedService(db, &countingCapturer{}, &clock{now: time.Now().UTC().Truncate(time.Second)})
		returns := returnsFor(svc)
		in := authenticationInput(provider.AuthenticateThenApprove)
		in.Amount, in.CaptureMethod = "50.00", state.CaptureManual
		waiting, err := svc.Create(ctx, in)
		if err != nil || waiting.Status != state.PaymentRequiresAction {
			t.Fatalf("payment = %+v, %v; want requires_action", waiting, err)
		}
		held, err := svc.ShopperReturned(context.Background(), waiting.ID, returns.of(waiting.ID, nil))
		if err != nil || held.Status != state.PaymentRequiresCapture {
			t.Fatalf("shopper back = %+v, %v; want requires_capture", held, err)
		}
		if captured, err := svc.Capture(ctx, payment.CaptureInput{PaymentID: held.ID}); err != nil || captured.Status != state.PaymentSucceeded {
			t.Fatalf("capture = %+v, %v; want succeeded", captured, err)
		}
		for i := range payment.MaxRefunds {
			amount := decimal("0.01")
			if i == payment.MaxRefunds-1 {
				amount = nil // the rest: refunded
			}
			if _, err := svc.Refund(ctx, payment.RefundInput{PaymentID: held.ID, Amount: amount}); err != nil {
				t.Fatalf("refund %d: %v", i+1, err)
			}
		}
		if refunded, err := svc.Get(ctx, held.ID); err != nil || refunded.Status != state.PaymentRefunded {
			t.Fatalf("after the last refund = %+v, %v; want refunded", refunded, err)
		}
		moves := db.Ent.PaymentStatusChange.Query().Where(paymentstatuschange.PaymentID(held.ID)).CountX(databasetest.AsMerchant())
		if moves != payment.MaxStatusChanges {
			t.Errorf("the longest history is %d moves; MaxStatusChanges is %d", moves, payment.MaxStatusChanges)
		}
	})
}
