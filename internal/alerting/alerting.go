// Package alerting raises alerts from rules and lets people acknowledge and resolve them. Each
// condition has at most one unresolved alert: a unique column settles it, so any number of
// servers may evaluate the rules at once and still raise an alert once.
package alerting

import (
	"context"

	"github.com/paygate/paygate/internal/paging"

	"fmt"
	"log/slog"
	"time"

	"entgo.io/contrib/entgql"

	"github.com/paygate/paygate/ent"
	"github.com/paygate/paygate/ent/alert"
	"github.com/paygate/paygate/ent/payment"
	"github.com/paygate/paygate/ent/predicate"
	"github.com/paygate/paygate/ent/refund"
	"github.com/paygate/paygate/ent/webhookattempt"
	"github.com/paygate/paygate/ent/webhookendpoint"
	"github.com/paygate/paygate/ent/webhookevent"
	"github.com/paygate/paygate/internal/apierror"
	"github.com/paygate/paygate/internal/auth"
	"github.com/paygate/paygate/internal/money"
	"github.com/paygate/paygate/internal/settings"
	"github.com/paygate/paygate/internal/state"
	"github.com/paygate/paygate/internal/tenant"
)

// The rules.
const (
	RuleCircuitOpen       = "circuit_open"
	RuleProviderErrorRate = "provider_error_rate"
	RuleWebhookDead       = "webhook_dead"
	RuleRefundShare       = "refund_share"
	// RuleEndpointFailing: a merchant's webhook endpoint has failed every delivery for a day.
	RuleEndpointFailing = "webhook_endpoint_failing"
	// RuleReversalFailed: a payment canceled while its shopper authenticated was approved by its
	// provider afterwards, and Paygate could not void or refund that approval there. Raised by the
	// payment service, in the transaction that records the failure, not by Evaluate.
	RuleReversalFailed = "payment_reversal_failed"
)

// endpointFailingFor is how long an endpoint fails every delivery before it is alerted on.
const endpointFailingFor = 24 * time.Hour

// refundShareWindow is the hour the refund share rule weighs refunds against payments over.
const refundShareWindow = time.Hour

// Providers is what the rules read of the providers, as this server sees them.
type Providers interface {
	Names() []string
	CircuitOpen(name string) bool
	ErrorRate(name string) (rate float64, enough bool)
}

// Alerts raises and keeps the alerts.
type Alerts struct {
	Client    *ent.Client
	Providers Providers
	// Settings are the thresholds in force.
	Settings func() settings.AlertThresholds
	Now      func() time.Time
	Logger   *slog.Logger
}

// finding is a condition a rule found.
type finding struct {
	rule, subject string
	severity      state.AlertSeverity
	message       string
}

// Evaluate runs every rule and raises an alert for each condition found that has none
// unresolved; it returns how many it raised.
func (a *Alerts) Evaluate(ctx context.Context) (int, error) {
	ctx = tenant.System(ctx) // every merchant's
	findings, err := a.find(ctx)
	if err != nil {
		return 0, err
	}
	raised := 0
	for _, f := range findings {
		ok, err := a.raise(ctx, f)
		if err != nil {
			return raised, err
		}
		if ok {
			raised++
			a.Logger.Warn("alert raised", "rule", f.rule, "subject", f.subject, "severity", f.severity, "message", f.message)
		}
	}
	return raised, nil
}

func (a *Alerts) find(ctx context.Context) ([]finding, error) {
	thresholds := a.Settings()
	var findings []finding
	for _, name := range a.Providers.Names() {
		if a.Providers.CircuitOpen(name) {
			findings = append(findings, finding{RuleCircuitOpen, name, state.AlertCritical,
				fmt.Sprintf("The circuit to %s is open: payments fail over to other providers.", name)})
		}
		if rate, enough := a.Providers.ErrorRate(name); enough && rate > thresholds.ProviderErrorRate {
			findings = append(findings, finding{RuleProviderErrorRate, name, state.AlertWarning,
				fmt.Sprintf("%.0f%% of the calls to %s failed in the circuit breaker's window, above the %.0f%% alerted on.", rate*100, name, thresholds.ProviderErrorRate*100)})
		}
		dead, err := a.deadSinceLastAlert(ctx, name)
		if err != nil {
			return nil, err
		}
		if dead > 0 {
			findings = append(findings, finding{RuleWebhookDead, name, state.AlertWarning,
				fmt.Sprintf("%d webhook event(s) from %s ran out of retries: see the webhook logs with status dead, and retry them once the cause is fixed.", dead, name)})
		}
	}
	shares, err := a.refundShares(ctx, thresholds.RefundShare)
	if err != nil {
		return nil, err
	}
	failing, err := a.Client.WebhookEndpoint.Query().Where(webhookendpoint.StatusEQ(state.EndpointEnabled),
		webhookendpoint.FailingSinceLTE(a.Now().Add(-endpointFailingFor))).
		Select(webhookendpoint.FieldID, webhookendpoint.FieldFailingSince).All(ctx)
	if err != nil {
		return nil, err
	}
	for _, e := range failing {
		findings = append(findings, finding{RuleEndpointFailing, e.ID, state.AlertWarning,
			fmt.Sprintf("Webhook endpoint %s has failed every delivery since %s: see its deliveries; each is retried for three days, then fails.",
				e.ID, e.FailingSince.UTC().Format(time.RFC3339))})
	}
	return append(findings, shares...), nil
}

// deadSinceLastAlert counts the provider's events that died since its last dead-event alert was
// raised (ever, before the first), so an event is alerted on once.
func (a *Alerts) deadSinceLastAlert(ctx context.Context, provider string) (int, error) {
	attempts := a.Client.WebhookAttempt.Query().Where(webhookattempt.StatusEQ(state.WebhookDead),
		webhookattempt.HasEventWith(webhookevent.ProviderEQ(provider), webhookevent.StatusEQ(state.WebhookDead)))
	last, err := a.Client.Alert.Query().Where(alert.RuleEQ(RuleWebhookDead), alert.SubjectEQ(provider)).
		Order(ent.Desc(alert.FieldOpenedAt)).First(ctx)
	switch {
	case err == nil:
		attempts.Where(webhookattempt.AtGT(last.OpenedAt))
	case !ent.IsNotFound(err):
		return 0, err
	}
	return attempts.Count(ctx)
}

// refundShares finds the currencies whose refunds made in the last hour (pending or succeeded)
// exceed share of the captured volume they came from: what the hour's payments captured (those
// refunded since included: a refund does not undo its payment) and what the older payments those
// refunds belong to captured. Weighed against the hour's payments alone, an ordinary refund of
// yesterday's payment in a quiet hour would look like a run on refunds.
func (a *Alerts) refundShares(ctx context.Context, share float64) ([]finding, error) {
	since := a.Now().Add(-refundShareWindow)
	type sum struct {
		Currency string `json:"currency"`
		Sum      int64  `json:"sum"`
	}
	var recent, older, refunded []sum
	refundedInWindow := []predicate.Refund{refund.CreatedAtGTE(since), refund.StatusNEQ(state.RefundFailed)}
	if err := a.Client.Payment.Query().Where(payment.CreatedAtGTE(since)).
		GroupBy(payment.FieldCurrency).Aggregate(ent.Sum(payment.FieldAmountCaptured)).Scan(ctx, &recent); err != nil {
		return nil, err
	}
	// Each older payment once, however many of its refunds the hour holds.
	if err := a.Client.Payment.Query().Where(payment.CreatedAtLT(since), payment.HasRefundsWith(refundedInWindow...)).
		GroupBy(payment.FieldCurrency).Aggregate(ent.Sum(payment.FieldAmountCaptured)).Scan(ctx, &older); err != nil {
		return nil, err
	}
	if err := a.Client.Refund.Query().Where(refundedInWindow...).
		GroupBy(refund.FieldCurrency).Aggregate(ent.Sum(refund.FieldAmount)).Scan(ctx, &refunded); err != nil {
		return nil, err
	}
	captured := map[string]int64{}
	for _, row := range append(recent, older...) {
		captured[row.Currency] += row.Sum
	}
	var findings []finding
	for _, row := range refunded {
		if float64(row.Sum) > share*float64(captured[row.Currency]) {
			findings = append(findings, finding{RuleRefundShare, row.Currency, state.AlertWarning,
				fmt.Sprintf("Refunds of %s in the last hour came to %s against %s captured by the payments made or refunded in that hour, above the %.0f%% alerted on.",
					row.Currency, money.Amount{Minor: row.Sum, Currency: row.Currency}, money.Amount{Minor: captured[row.Currency], Currency: row.Currency}, share*100)})
		}
	}
	return findings, nil
}

// RaiseIn raises, within tx, an alert of rule about subject unless one is unresolved, and reports
// whether it did: for a condition found by the work that records it, so the alert exists if and
// only if that work is committed. The caller serialises the raising of one subject (a row lock it
// holds), since on PostgreSQL a unique violation would end tx.
func RaiseIn(ctx context.Context, tx *ent.Tx, rule, subject string, severity state.AlertSeverity, message string, at time.Time) (bool, error) {
	key := rule + ":" + subject
	exists, err := tx.Alert.Query().Where(alert.Unresolved(key)).Exist(ctx)
	if err != nil || exists {
		return false, err
	}
	created, err := tx.Alert.Create().SetRule(rule).SetSubject(subject).SetSeverity(severity).
		SetMessage(message).SetOpenedAt(at).SetUnresolved(key).Save(ctx)
	if err != nil {
		return false, err
	}
	return true, tx.AlertChange.Create().SetAlertID(created.ID).SetAction(state.AlertOpened).SetBy("system").SetAt(at).Exec(ctx)
}

// raise records an alert for f unless one is unresolved; it reports whether it did.
func (a *Alerts) raise(ctx context.Context, f finding) (bool, error) {
	key := f.rule + ":" + f.subject
	exists, err := a.Client.Alert.Query().Where(alert.Unresolved(key)).Exist(ctx)
	if err != nil || exists {
		return false, err
	}
	now := a.Now()
	tx, err := a.Client.Tx(ctx)
	if err != nil {
		return false, err
	}
	created, err := tx.Alert.Create().SetRule(f.rule).SetSubject(f.subject).SetSeverity(f.severity).
		SetMessage(f.message).SetOpenedAt(now).SetUnresolved(key).Save(ctx)
	if ent.IsConstraintError(err) {
		tx.Rollback()
		return false, nil // another server raised it first
	}
	if err != nil {
		tx.Rollback()
		return false, err
	}
	if err := tx.AlertChange.Create().SetAlertID(created.ID).SetAction(state.AlertOpened).SetBy("system").SetAt(now).Exec(ctx); err != nil {
		tx.Rollback()
		return false, err
	}
	if err := tx.Commit(); err != nil {
		if ent.IsConstraintError(err) {
			return false, nil
		}
		return false, err
	}
	return true, nil
}

// List pages through the alerts, newest first unless ordered otherwise.
func (a *Alerts) List(ctx context.Context, after *ent.Cursor, first *int, before *ent.Cursor, last *int,
	orderBy *ent.AlertOrder, where *ent.AlertWhereInput) (*ent.AlertConnection, error) {
	if err := auth.Authorize(ctx, auth.ListAlerts); err != nil {
		return nil, err
	}
	// Bounded as the other lists are.
	first, err := paging.CheckPage(first, last)
	if err != nil {
		return nil, err
	}
	if err := paging.CheckFilter(where); err != nil {
		return nil, err
	}
	if orderBy == nil {
		orderBy = NewestFirst
	}
	return a.Client.Alert.Query().Paginate(ctx, after, first, before, last, ent.WithAlertOrder(orderBy), ent.WithAlertFilter(where.Filter))
}

// Acknowledge marks an open alert as seen by the caller: someone is on it.
func (a *Alerts) Acknowledge(ctx context.Context, id string) (*ent.Alert, error) {
	if err := auth.Authorize(ctx, auth.AcknowledgeAlert); err != nil {
		return nil, err
	}
	return a.change(ctx, id, state.AlertWasAcknowledged)
}

// Resolve closes an alert: a rule that finds its condition again raises a new one.
func (a *Alerts) Resolve(ctx context.Context, id string) (*ent.Alert, error) {
	if err := auth.Authorize(ctx, auth.ResolveAlert); err != nil {
		return nil, err
	}
	return a.change(ctx, id, state.AlertWasResolved)
}

// change acknowledges or resolves an alert, with who and when, once: an alert resolved is not
// acknowledged or resolved again, one acknowledged is not acknowledged again.
func (a *Alerts) change(ctx context.Context, id string, action state.AlertAction) (*ent.Alert, error) {
	p, _ := auth.PrincipalFrom(ctx)
	now := a.Now()
	tx, err := a.Client.Tx(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	update := tx.Alert.Update().Where(alert.ID(id))
	switch action {
	case state.AlertWasAcknowledged:
		update.Where(alert.StatusEQ(state.AlertOpen)).SetStatus(state.AlertAcknowledged).SetAcknowledgedBy(p.Subject).SetAcknowledgedAt(now)
	default:
		update.Where(alert.StatusNEQ(state.AlertResolved)).SetStatus(state.AlertResolved).SetResolvedBy(p.Subject).SetResolvedAt(now).ClearUnresolved()
	}
	// Conditional, so of two people acting at once one changes it and the other is told.
	n, err := update.Save(ctx)
	if err != nil {
		return nil, err
	}
	if n == 0 {
		current, err := tx.Alert.Get(ctx, id)
		if ent.IsNotFound(err) {
			return nil, apierror.ForParam(apierror.NotFound, "id", "no alert has the id "+id)
		}
		if err != nil {
			return nil, err
		}
		return nil, apierror.New(apierror.InvalidState, fmt.Sprintf("the alert is %s: it cannot be %s", current.Status, action))
	}
	if err := tx.AlertChange.Create().SetAlertID(id).SetAction(action).SetBy(p.Subject).SetAt(now).Exec(ctx); err != nil {
		return nil, err
	}
	if err := tx.Commit(); err != nil {
		return nil, err
	}
	return a.Client.Alert.Get(ctx, id)
}

// NewestFirst is the order of the alert list.
var NewestFirst = &ent.AlertOrder{Field: ent.AlertOrderFieldOpenedAt, Direction: entgql.OrderDirectionDesc}

// CursorAt returns the cursor of the alert with id, for REST's starting_after and ending_before.
func (a *Alerts) CursorAt(ctx context.Context, id, param string) (*ent.Cursor, error) {
	if err := auth.Authorize(ctx, auth.ListAlerts); err != nil {
		return nil, err
	}
	found, err := a.Client.Alert.Query().Where(alert.ID(id)).Select(alert.FieldOpenedAt).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, apierror.ForParam(apierror.InvalidRequest, param, "no alert has the id "+id)
	}
	if err != nil {
		return nil, err
	}
	return &ent.Cursor{ID: id, Value: found.OpenedAt}, nil
}
