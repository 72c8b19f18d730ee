package inbound_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/paygate/paygate/internal/tenant"

	"github.com/paygate/paygate/ent"
	"github.com/paygate/paygate/internal/apierror"
	"github.com/paygate/paygate/internal/auth"
	"github.com/paygate/paygate/internal/database"
	"github.com/paygate/paygate/internal/database/databasetest"
	"github.com/paygate/paygate/internal/inbound"
	"github.com/paygate/paygate/internal/payment"
	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/settings"
	"github.com/paygate/paygate/internal/state"
)

// asRole is a request context of a principal with role's scopes.
func asRole(role string) context.Context {
	return auth.WithPrincipal(context.Background(), auth.Principal{Subject: "usr_" + role, Role: role, Scopes: auth.ScopesOf(role), Merchant: tenant.DefaultMerchant, Home: tenant.DefaultMerchant, Platform: true})
}

func codeOf(err error) apierror.Code {
	if apiErr, ok := errors.AsType[*apierror.Error](err); ok {
		return apiErr.Code
	}
	return ""
}

// logsEvent stores an event as the worker would have left it.
func logsEvent(t *testing.T, db *database.DB, provider string, status state.WebhookStatus, received time.Time, latency time.Duration) *ent.WebhookEvent {
	t.Helper()
	create := db.Ent.WebhookEvent.Create().SetProvider(provider).SetEventID(fmt.Sprintf("evt_%d", received.UnixNano())).
		SetType("payment_intent.succeeded").SetStatus(status).SetPayload([]byte(`{}`)).SetReceivedAt(received)
	switch {
	case status.Due():
		create.SetNextAttemptAt(received)
	case status == state.WebhookProcessed || status == state.WebhookIgnored:
		create.SetProcessedAt(received.Add(latency))
	}
	event, err := create.Save(databasetest.AsMerchant())
	if err != nil {
		t.Fatal(err)
	}
	return event
}

func TestSignatureFailuresAreCountedPerProvider(t *testing.T) {
	var failures inbound.SignatureFailures
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() {
			failures.Add("stripe")
			failures.Add("adyen")
			failures.Add("stripe")
		})
	}
	wg.Wait()
	if failures.Count("stripe") != 100 || failures.Count("adyen") != 50 || failures.Count("checkout") != 0 {
		t.Errorf("counts: stripe %d, adyen %d, checkout %d", failures.Count("stripe"), failures.Count("adyen"), failures.Count("checkout"))
	}
}

// TestLatenciesAreOfTheLatestEvents: the percentiles are taken over the latest 1000 processed
// events of the provider, whatever came before, and the counts over every event.
func TestLatenciesAreOfTheLatestEvents(t *testing.T) {
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		ctx := databasetest.AsMerchant()
		start := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
		var events []*ent.WebhookEventCreate
		for i := range 1010 {
			latency := time.Duration(i%100+1) * time.Millisecond // 1 to 100 ms, ten times over
			if i < 10 {
				latency = time.Hour // the oldest ten, outside the window
			}
			received := start.Add(time.Duration(i) * time.Second)
			events = append(events, db.Ent.WebhookEvent.Create().SetProvider("adyen").SetEventID(fmt.Sprint("evt_", i)).
				SetType("AUTHORISATION").SetStatus(state.WebhookProcessed).SetPayload([]byte(`{}`)).
				SetReceivedAt(received).SetProcessedAt(received.Add(latency)))
		}
		if err := db.Ent.WebhookEvent.CreateBulk(events...).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		logs := &inbound.Logs{Client: db.Ent, Providers: []string{"stripe", "adyen", "checkout"}, Now: time.Now, SignatureFailures: &inbound.SignatureFailures{}}
		metrics, err := logs.Metrics(asRole("viewer"))
		if err != nil {
			t.Fatal(err)
		}
		adyen := metrics[1]
		if adyen.Provider != "adyen" || adyen.Received != 1010 || adyen.Processed != 1010 || adyen.P50MS == nil ||
			*adyen.P50MS != 50 || *adyen.P99MS != 99 {
			t.Errorf("adyen = %+v, want p50 50, p99 99 over the latest 1000", adyen)
		} else if stripe := metrics[0]; stripe.Received != 0 || stripe.P50MS != nil || stripe.P99MS != nil {
			t.Errorf("stripe, without events = %+v", stripe)
		}
	})
}

// TestRetriedEventIsProcessedAgain: a dead event retried is taken by the worker again, with its
// attempts counted from one, and its log holds the attempts of both rounds.
func TestRetriedEventIsProcessedAgain(t *testing.T) {
	databasetest.ForEach(t, func(t *testing.T, db *database.DB) {
		ctx := databasetest.AsMerchant()
		c := newClock()
		failing := true
		w := inbound.NewWorker(inbound.Worker{
			Client: db.Ent,
			Readers: map[string]inbound.Reader{"stripe": func(string, []byte) (provider.Notification, error) {
				return provider.Notification{Kind: provider.ChargeSucceeded, PaymentID: "pay_x"}, nil
			}},
			Apply: func(context.Context, *ent.Tx, string, provider.Notification) (payment.Applied, error) {
				if failing {
					return payment.Applied{}, errors.New("database busy")
				}
				return payment.Applied{PaymentID: "pay_x"}, nil
			},
			Retry:  func() settings.WebhookRetry { return settings.WebhookRetry{BaseS: 30, Factor: 2, MaxAttempts: 1} },
			Now:    c.Now,
			Logger: quietLog,
		})
		requeued := 0
		logs := &inbound.Logs{Client: db.Ent, Now: c.Now, SignatureFailures: &inbound.SignatureFailures{}, Requeued: func() { requeued++ }}
		event := logsEvent(t, db, "stripe", state.WebhookReceived, c.Now(), 0)
		if _, err := w.ProcessDue(ctx); err != nil {
			t.Fatal(err)
		}
		if got := db.Ent.WebhookEvent.GetX(ctx, event.ID); got.Status != state.WebhookDead {
			t.Fatalf("after one failure with one attempt allowed: %s", got.Status)
		}

		if _, err := logs.Retry(asRole("viewer"), event.ID); codeOf(err) != apierror.Forbidden {
			t.Errorf("a viewer's retry = %v, want forbidden", err)
		}
		c.Advance(time.Minute)
		retried, err := logs.Retry(asRole("operator"), event.ID)
		if err != nil {
			t.Fatal(err)
		}
		if retried.Status != state.WebhookReceived || retried.Attempts != 0 || retried.NextAttemptAt == nil ||
			!retried.NextAttemptAt.Equal(c.Now()) || retried.LastError == nil || *retried.LastError != "database busy" || requeued != 1 {
			t.Errorf("retried = %+v, requeued %d times", retried, requeued)
		}
		failing = false
		if _, err := w.ProcessDue(ctx); err != nil {
			t.Fatal(err)
		}
		got, err := logs.Get(asRole("viewer"), event.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != state.WebhookProcessed || got.Attempts != 1 || len(got.Edges.AttemptLog) != 2 ||
			got.Edges.AttemptLog[0].Status != state.WebhookDead || got.Edges.AttemptLog[1].Status != state.WebhookProcessed {
			t.Errorf("after the retry was processed: %+v, attempts %+v", got, got.Edges.AttemptLog)
		}
		if got.Payload != nil {
			t.Error("Get read the payload")
		}
		if _, err := logs.Retry(asRole("operator"), event.ID); codeOf(err) != apierror.InvalidState {
			t.Errorf("retry of a processed event = %v, want invalid_state", err)
		}
	})
}

// TestLogsAuthoriseEveryCall: without a principal every call is refused before anything is read.
func TestLogsAuthoriseEveryCall(t *testing.T) {
	db := databasetest.SQLite(t)
	logs := &inbound.Logs{Client: db.Ent, Now: time.Now, SignatureFailures: &inbound.SignatureFailures{}}
	anonymous := context.Background()
	calls := map[string]func() error{
		"List":     func() error { _, err := logs.List(anonymous, nil, nil, nil, nil, nil, nil); return err },
		"CursorAt": func() error { _, err := logs.CursorAt(anonymous, "whe_x", "starting_after"); return err },
		"Get":      func() error { _, err := logs.Get(anonymous, "whe_x"); return err },
		"Retry":    func() error { _, err := logs.Retry(anonymous, "whe_x"); return err },
		"Metrics":  func() error { _, err := logs.Metrics(anonymous); return err },
	}
	for name, call := range calls {
		if err := call(); codeOf(err) != apierror.Unauthenticated {
			t.Errorf("%s without a principal = %v", name, err)
		}
	}
}
