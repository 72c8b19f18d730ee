package metrics

import (
	"cmp"
	"context"
	"database/sql"
	rtmetrics "runtime/metrics"
	"slices"
	"time"

	"github.com/paygate/paygate/ent"
	"github.com/paygate/paygate/ent/payment"
	"github.com/paygate/paygate/ent/webhookevent"
	"github.com/paygate/paygate/internal/auth"
	"github.com/paygate/paygate/internal/money"
	"github.com/paygate/paygate/internal/state"
	"github.com/paygate/paygate/internal/tenant"
)

// SystemWindow is how far back the payment and webhook figures of the monitoring API reach: a
// day's traffic, read through the indexes on creation and receipt time, whatever the tables hold.
const SystemWindow = 24 * time.Hour

// System gives the monitoring API's figures: this server's requests, pool and runtime, and
// everyone's payments and webhook events of the last day, from the database.
type System struct {
	Client   *ent.Client
	DB       *sql.DB
	Dialect  string // dialect.SQLite or dialect.Postgres: the overview reads JSON in each's own way
	Counters *Metrics
	Now      func() time.Time
}

// SystemFigures are the figures a dashboard shows.
type SystemFigures struct {
	Uptime   time.Duration
	Requests RequestFigures
	Payments PaymentFigures
	Webhooks WebhookFigures
	Database sql.DBStats
	Runtime  RuntimeFigures
}

// PaymentFigures are the payments made within SystemWindow: how many are in each status, and their
// net volume in each currency: what was captured less what was refunded (succeeded refunds), so
// an authorisation not captured, a failed or canceled payment and a refunded one add nothing.
// Every currency with a payment in the window is listed, at zero when nothing of it is kept.
type PaymentFigures struct {
	ByStatus []StatusCount
	Volume   []money.Amount
}

// StatusCount is how many are in a status.
type StatusCount struct {
	Status string
	Count  int
}

// WebhookFigures are the provider events received within SystemWindow, and how many of them are
// in each status now.
type WebhookFigures struct {
	Received, Processed, Ignored, Failed, Dead int
}

// RuntimeFigures are this process's.
type RuntimeFigures struct {
	Goroutines int
	HeapBytes  int64
}

// Figures reads the figures, for a holder of monitoring:read.
func (s *System) Figures(ctx context.Context) (SystemFigures, error) {
	if err := auth.Authorize(ctx, auth.SystemMetrics); err != nil {
		return SystemFigures{}, err
	}
	if p, _ := auth.PrincipalFrom(ctx); !p.ActsForAnother() {
		// Platform-wide, unless platform staff act for one merchant (Paygate-Merchant).
		ctx = tenant.System(ctx)
	}
	since := s.Now().Add(-SystemWindow)
	figures := SystemFigures{Uptime: s.Counters.Uptime(), Requests: s.Counters.Requests(), Database: s.DB.Stats(), Runtime: runtimeFigures()}

	var byStatus []struct {
		Status string `json:"status"`
		Count  int    `json:"count"`
	}
	if err := s.Client.Payment.Query().Where(payment.CreatedAtGTE(since)).
		GroupBy(payment.FieldStatus).Aggregate(ent.Count()).Scan(ctx, &byStatus); err != nil {
		return SystemFigures{}, err
	}
	for _, row := range byStatus {
		figures.Payments.ByStatus = append(figures.Payments.ByStatus, StatusCount{Status: row.Status, Count: row.Count})
	}
	slices.SortFunc(figures.Payments.ByStatus, func(a, b StatusCount) int { return cmp.Compare(a.Status, b.Status) })

	// Net of refunds, whatever the status: amount_captured and amount_refunded say what moved,
	// and a status alone cannot (a capture in part, a refund in part).
	var volume []struct {
		Currency string `json:"currency"`
		Captured int64  `json:"captured"`
		Refunded int64  `json:"refunded"`
	}
	if err := s.Client.Payment.Query().Where(payment.CreatedAtGTE(since)).GroupBy(payment.FieldCurrency).
		Aggregate(ent.As(ent.Sum(payment.FieldAmountCaptured), "captured"), ent.As(ent.Sum(payment.FieldAmountRefunded), "refunded")).
		Scan(ctx, &volume); err != nil {
		return SystemFigures{}, err
	}
	for _, row := range volume {
		figures.Payments.Volume = append(figures.Payments.Volume, money.Amount{Minor: row.Captured - row.Refunded, Currency: row.Currency})
	}
	slices.SortFunc(figures.Payments.Volume, func(a, b money.Amount) int { return cmp.Compare(a.Currency, b.Currency) })

	var events []struct {
		Status string `json:"status"`
		Count  int    `json:"count"`
	}
	if err := s.Client.WebhookEvent.Query().Where(webhookevent.ReceivedAtGTE(since)).
		GroupBy(webhookevent.FieldStatus).Aggregate(ent.Count()).Scan(ctx, &events); err != nil {
		return SystemFigures{}, err
	}
	for _, row := range events {
		figures.Webhooks.Received += row.Count
		switch state.WebhookStatus(row.Status) {
		case state.WebhookProcessed:
			figures.Webhooks.Processed = row.Count
		case state.WebhookIgnored:
			figures.Webhooks.Ignored = row.Count
		case state.WebhookFailed:
			figures.Webhooks.Failed = row.Count
		case state.WebhookDead:
			figures.Webhooks.Dead = row.Count
		}
	}
	return figures, nil
}

// runtimeFigures reads the goroutines and the live heap without stopping the world, as
// runtime.ReadMemStats would.
func runtimeFigures() RuntimeFigures {
	samples := []rtmetrics.Sample{{Name: "/sched/goroutines:goroutines"}, {Name: "/memory/classes/heap/objects:bytes"}}
	rtmetrics.Read(samples)
	return RuntimeFigures{Goroutines: int(samples[0].Value.Uint64()), HeapBytes: int64(samples[1].Value.Uint64())}
}
