package inbound

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/paygate/paygate/ent"
	"github.com/paygate/paygate/ent/predicate"
	"github.com/paygate/paygate/ent/webhookevent"
	"github.com/paygate/paygate/internal/database"
	"github.com/paygate/paygate/internal/payment"
	"github.com/paygate/paygate/internal/provider"
	"github.com/paygate/paygate/internal/settings"
	"github.com/paygate/paygate/internal/state"
	"github.com/paygate/paygate/internal/tenant"
	"github.com/paygate/paygate/internal/tracing"
)

// Reader reads one provider's verified event into what Paygate acts on.
type Reader func(eventType string, payload []byte) (provider.Notification, error)

// Preparer completes a notification with what only its provider can tell (the refunds an event
// does not name), outside any transaction: payment.Service.PrepareNotification.
type Preparer func(ctx context.Context, providerName string, n provider.Notification) (provider.Notification, error)

// Applier records what a notification says within tx: payment.Service.ApplyNotification.
type Applier func(ctx context.Context, tx *ent.Tx, providerName string, n provider.Notification) (payment.Applied, error)

// Worker processes the stored events. The event rows are the queue: a due event (received, or
// failed and its next attempt come) is claimed by a conditional update inside the transaction
// that applies it and records the outcome, so on any number of servers an event is applied once,
// and an event whose server dies mid-way is rolled back to due and taken again after.
type Worker struct {
	Client *ent.Client
	// Readers read each provider's events.
	Readers map[string]Reader
	// Prepare, when set, completes each notification before the transaction that applies it, so
	// no lock is held while a provider is asked.
	Prepare Preparer
	Apply   Applier
	// Retry is the retry policy in force: base wait, factor, attempts before dead.
	Retry func() settings.WebhookRetry
	Now   func() time.Time
	// Jitter returns a number in [0, 1) that spreads retries (default: math/rand/v2).
	Jitter func() float64
	Logger *slog.Logger
	// Observe, when set, is told of each event's new status as it is committed.
	Observe func(provider, status string)

	wake chan struct{}
}

// workerBatch is how many due events one look at the queue takes.
const workerBatch = 50

// maxRetryWait caps one wait between attempts, whatever the policy's factor makes of it.
const maxRetryWait = 24 * time.Hour

// maxErrorText bounds the error kept on an event or attempt, as the columns do.
const maxErrorText = 1000

// NewWorker returns w ready to run.
func NewWorker(w Worker) *Worker {
	w.wake = make(chan struct{}, 1)
	if w.Jitter == nil {
		w.Jitter = rand.Float64
	}
	return &w
}

// Wake makes the worker's loop look at the queue now rather than at its next tick.
func (w *Worker) Wake() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// Woken receives when the worker was woken: new events are waiting.
func (w *Worker) Woken() <-chan struct{} { return w.wake }

// ProcessDueAll processes every due event, a batch at a time.
func (w *Worker) ProcessDueAll(ctx context.Context) error {
	ctx = tenant.System(ctx) // every merchant's
	for {
		processed, err := w.ProcessDue(ctx)
		if err != nil || processed < workerBatch {
			return err
		}
	}
}

// ProcessDue takes up to a batch of due events, oldest due first, and processes each that no
// other worker took meanwhile. It returns how many it looked at.
func (w *Worker) ProcessDue(ctx context.Context) (int, error) {
	ctx = tenant.System(ctx) // every merchant's
	// Without their payloads, which are read one at a time as each is claimed, so a batch of
	// large events never sits in memory at once.
	due, err := w.Client.WebhookEvent.Query().
		Where(webhookevent.StatusIn(state.WebhookReceived, state.WebhookFailed), webhookevent.NextAttemptAtLTE(w.Now())).
		Order(ent.Asc(webhookevent.FieldNextAttemptAt), ent.Asc(webhookevent.FieldID)).
		Select(webhookevent.FieldID, webhookevent.FieldProvider, webhookevent.FieldType, webhookevent.FieldStatus,
			webhookevent.FieldAttempts, webhookevent.FieldNextAttemptAt, webhookevent.FieldTraceParent).
		Limit(workerBatch).All(ctx)
	if err != nil {
		return 0, err
	}
	var errs []error
	for _, event := range due {
		if ctx.Err() != nil {
			break
		}
		if err := w.process(ctx, event); err != nil {
			errs = append(errs, fmt.Errorf("event %s: %w", event.ID, err))
		}
	}
	return len(due), errors.Join(errs...)
}

// process applies event, as read, and records how it went; an event another worker took first is
// left alone. It is traced as a span of its own, linked to the delivery that brought the event.
func (w *Worker) process(ctx context.Context, event *ent.WebhookEvent) (err error) {
	ctx, span := tracing.StartWork(ctx, "process webhook event", event.TraceParent, trace.SpanKindConsumer,
		attribute.String("paygate.provider", event.Provider), attribute.String("paygate.webhook_event.id", event.ID),
		attribute.String("paygate.webhook_event.type", event.Type), attribute.Int("paygate.webhook_event.attempt", event.Attempts+1))
	defer func() { tracing.End(span, err) }()
	start := w.Now()
	outcome, claimed, applyErr := w.applyOnce(ctx, event, start)
	span.SetAttributes(attribute.Bool("paygate.webhook_event.claimed", claimed))
	switch {
	case !claimed && applyErr == nil:
		return nil
	case applyErr == nil && !outcome.NotBefore.IsZero():
		// Its payment's own request may still be recording, or its payment is not known yet:
		// come back then.
		return w.claimed(event).SetNextAttemptAt(outcome.NotBefore).Exec(ctx)
	case applyErr == nil && outcome.NeedsAttention:
		// The provider and the books disagree about money: someone must be told, not only the log
		// of events.
		w.Logger.ErrorContext(ctx, "webhook event needs a person", "event", event.ID, "provider", event.Provider, "type", event.Type,
			"payment", outcome.PaymentID, "reason", outcome.Ignored)
		span.SetStatus(codes.Error, "needs a person: "+outcome.Ignored)
		return nil
	case applyErr == nil && outcome.Ignored != "":
		w.Logger.InfoContext(ctx, "webhook event ignored", "event", event.ID, "provider", event.Provider, "type", event.Type,
			"payment", outcome.PaymentID, "reason", outcome.Ignored)
		return nil
	case applyErr == nil:
		return nil
	}
	if ctx.Err() != nil {
		return nil // stopping: the event stays due and is taken again
	}
	w.Logger.WarnContext(ctx, "webhook event failed", "event", event.ID, "provider", event.Provider, "type", event.Type, "attempt", event.Attempts+1, "error", applyErr)
	span.SetStatus(codes.Error, applyErr.Error())
	return w.recordFailure(ctx, event, start, applyErr)
}

// prepare reads event and completes it (Prepare) before any transaction, so no lock is held while
// a provider is asked; two workers may both ask, and only the one that claims the event applies
// it. readErr says the event cannot be read; a panic, in a reader or in Prepare, is an error.
func (w *Worker) prepare(ctx context.Context, event *ent.WebhookEvent) (n provider.Notification, readErr, err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("panic: %v", v)
		}
	}()
	stored, err := w.Client.WebhookEvent.Query().Where(webhookevent.ID(event.ID)).Select(webhookevent.FieldPayload).Only(ctx)
	if err != nil {
		return n, nil, err
	}
	if n, readErr = w.read(event, stored.Payload); readErr != nil || w.Prepare == nil {
		return n, readErr, nil
	}
	n, err = w.Prepare(ctx, event.Provider, n)
	return n, nil, err
}

// applyOnce claims event and applies it in one transaction with the record of its outcome.
// claimed is false when another worker changed the event first.
func (w *Worker) applyOnce(ctx context.Context, event *ent.WebhookEvent, start time.Time) (outcome payment.Applied, claimed bool, err error) {
	notification, readErr, err := w.prepare(ctx, event)
	if err != nil {
		return outcome, true, err // recorded as a failed attempt, if the event is still as read
	}
	tx, err := w.Client.Tx(ctx)
	if err != nil {
		return outcome, false, err
	}
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("panic: %v", v)
		}
		if err != nil || !claimed || !outcome.NotBefore.IsZero() {
			tx.Rollback()
		}
	}()
	// The claim: on PostgreSQL its row lock holds off any other worker until this transaction
	// ends, after which theirs finds the event changed; on SQLite the write lock does the same.
	n, err := tx.WebhookEvent.Update().Where(claimOf(event), webhookevent.NextAttemptAtLTE(start)).
		SetAttempts(event.Attempts + 1).Save(ctx)
	if err != nil || n == 0 {
		return outcome, false, err
	}
	claimed = true
	status := state.WebhookProcessed
	if readErr != nil {
		outcome.Ignored = readErr.Error()
	} else if outcome, err = w.Apply(ctx, tx, event.Provider, notification); err != nil {
		return outcome, true, err
	}
	if !outcome.NotBefore.IsZero() {
		return outcome, true, nil
	}
	if outcome.Ignored != "" {
		status = state.WebhookIgnored
	}
	done := w.Now()
	update := tx.WebhookEvent.UpdateOneID(event.ID).SetStatus(status).SetProcessedAt(done).ClearNextAttemptAt()
	if outcome.PaymentID != "" {
		update.SetPaymentID(outcome.PaymentID)
	}
	if outcome.Ignored != "" {
		update.SetIgnoredReason(database.StorableText(outcome.Ignored, maxErrorText))
	}
	if err := update.Exec(ctx); err != nil {
		return outcome, true, err
	}
	if err := tx.WebhookAttempt.Create().SetEventID(event.ID).SetAt(start).SetStatus(status).
		SetDurationMs(elapsedMs(start, done)).Exec(ctx); err != nil {
		return outcome, true, err
	}
	if err := tx.Commit(); err != nil {
		return outcome, true, err
	}
	w.observe(event.Provider, status)
	return outcome, true, nil
}

func (w *Worker) observe(provider string, status state.WebhookStatus) {
	if w.Observe != nil {
		w.Observe(provider, string(status))
	}
}

// read reads event's payload with its provider's reader; an event that cannot be read is ignored, with
// why, since trying it again would read it no better.
func (w *Worker) read(event *ent.WebhookEvent, payload []byte) (provider.Notification, error) {
	read, ok := w.Readers[event.Provider]
	if !ok {
		return provider.Notification{}, fmt.Errorf("no reader of %s events", event.Provider)
	}
	n, err := read(event.Type, payload)
	if err != nil {
		return n, fmt.Errorf("unreadable %s event: %w", event.Type, err)
	}
	return n, nil
}

// recordFailure counts a failed attempt: the event is tried again after a wait that grows with
// each attempt, or is dead once it has had the attempts the policy allows.
func (w *Worker) recordFailure(ctx context.Context, event *ent.WebhookEvent, start time.Time, cause error) error {
	policy := w.Retry()
	attempts := event.Attempts + 1
	now := w.Now()
	tx, err := w.Client.Tx(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	update := tx.WebhookEvent.Update().Where(claimOf(event)).SetAttempts(attempts).SetLastError(database.StorableText(cause.Error(), maxErrorText))
	status := state.WebhookFailed
	if attempts >= policy.MaxAttempts {
		status = state.WebhookDead
		update.ClearNextAttemptAt()
	} else {
		update.SetNextAttemptAt(now.Add(w.retryWait(policy, attempts)))
	}
	n, err := update.SetStatus(status).Save(ctx)
	if err != nil || n == 0 {
		return err // n == 0: another worker took it meanwhile, and records its own attempt
	}
	if err := tx.WebhookAttempt.Create().SetEventID(event.ID).SetAt(start).SetStatus(status).
		SetError(database.StorableText(cause.Error(), maxErrorText)).SetDurationMs(elapsedMs(start, now)).Exec(ctx); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	if status == state.WebhookDead {
		w.Logger.ErrorContext(ctx, "webhook event dead", "event", event.ID, "provider", event.Provider, "type", event.Type, "attempts", attempts)
	}
	w.observe(event.Provider, status)
	return nil
}

// retryWait is the wait after the attempt-th failure: base × factor^(attempt-1), capped, spread
// by ±20% so events that failed together are not all tried again together.
func (w *Worker) retryWait(policy settings.WebhookRetry, attempt int) time.Duration {
	seconds := float64(policy.BaseS) * math.Pow(policy.Factor, float64(attempt-1))
	wait := time.Duration(min(seconds, maxRetryWait.Seconds()) * float64(time.Second))
	return time.Duration(float64(wait) * (0.8 + 0.4*w.Jitter()))
}

// claimOf matches event only as it was read, so that of two workers holding the same reading
// one changes it.
func claimOf(event *ent.WebhookEvent) predicate.WebhookEvent {
	return webhookevent.And(webhookevent.ID(event.ID), webhookevent.StatusEQ(event.Status), webhookevent.Attempts(event.Attempts))
}

// claimed updates event only as it was read.
func (w *Worker) claimed(event *ent.WebhookEvent) *ent.WebhookEventUpdate {
	return w.Client.WebhookEvent.Update().Where(claimOf(event))
}

// elapsedMs is the time from start to end in milliseconds; never negative, since the wall clock
// the worker reads may be set back meanwhile.
func elapsedMs(start, end time.Time) int64 {
	return max(0, end.Sub(start).Milliseconds())
}
