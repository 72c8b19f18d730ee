package metrics

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"

	"github.com/paygate/paygate/ent/payment"
	"github.com/paygate/paygate/ent/refund"
	"github.com/paygate/paygate/internal/apierror"
	"github.com/paygate/paygate/internal/auth"
	"github.com/paygate/paygate/internal/money"
	"github.com/paygate/paygate/internal/routing"
	"github.com/paygate/paygate/internal/state"
	"github.com/paygate/paygate/internal/tenant"
)

// OverviewPeriod is a span of time the overview covers, cut into equal steps: one point of each
// series per step.
type OverviewPeriod struct {
	Name       string
	Span, Step time.Duration
}

// The periods an overview covers: at most 30 steps each, so that every series is a few points
// whatever the traffic.
var (
	OverviewDay   = OverviewPeriod{Name: "day", Span: 24 * time.Hour, Step: time.Hour}
	OverviewWeek  = OverviewPeriod{Name: "week", Span: 7 * 24 * time.Hour, Step: 6 * time.Hour}
	OverviewMonth = OverviewPeriod{Name: "month", Span: 30 * 24 * time.Hour, Step: 24 * time.Hour}

	OverviewPeriods = []OverviewPeriod{OverviewDay, OverviewWeek, OverviewMonth}
)

// OverviewPeriodNamed returns the period of that name, or an invalid_request error naming param.
func OverviewPeriodNamed(name, param string) (OverviewPeriod, error) {
	for _, p := range OverviewPeriods {
		if p.Name == name {
			return p, nil
		}
	}
	return OverviewPeriod{}, apierror.ForParam(apierror.InvalidRequest, param, "period must be day, week or month")
}

// Overview is how payments went over a period, step by step: what a dashboard draws.
type Overview struct {
	Period OverviewPeriod
	// From and To bound the period: To is the end of the step now is in, so the last step is
	// still filling.
	From, To time.Time
	Steps    []OverviewStep
	// DeclineReasons are why the payments made within the period failed, most first.
	DeclineReasons []ReasonCount
	// Providers are the providers asked to charge within the period, by name.
	Providers []ProviderSeries
}

// OverviewStep is one step of the period: the payments made in it and the refunds asked in it.
// Every currency of the period is listed in each step, at zero when the step has none of it.
type OverviewStep struct {
	Start    time.Time
	Payments int
	// Volume is what the payments made in the step captured, by currency; refunds are apart.
	Volume []money.Amount
	// Approved and Declined count the charges a provider decided when asked, as the payments'
	// routing recorded them: a decline ends a payment's routing (only an unavailable provider
	// passes it on), and a charge that asked for 3-D Secure is decided after the shopper's
	// return, which the routing does not record, so it is in neither.
	Approved, Declined int
	// Refunds are the refunds asked in the step that did not fail, by currency.
	Refunds []RefundTotal
}

// ApprovalRate is the share of the step's decided charges that were approved; nil when none was
// decided.
func (s OverviewStep) ApprovalRate() *float64 { return share(s.Approved, s.Approved+s.Declined) }

// RefundTotal is how many refunds of a currency, and their amount.
type RefundTotal struct {
	Count  int
	Amount money.Amount
}

// ReasonCount is how many payments failed for a reason: a decline's code, or why no provider
// decided (provider_unavailable, authentication_failed ...).
type ReasonCount struct {
	Reason string
	Count  int
}

// ProviderSeries is one provider's charge calls over the period, step by step.
type ProviderSeries struct {
	Provider string
	Steps    []ProviderStep
}

// ProviderStep is a provider's charge calls in a step: how many, how many failed (the provider
// was unavailable or its answer was lost), and how long they took, to two significant figures.
type ProviderStep struct {
	Start        time.Time
	Calls        int
	Errors       int
	P50MS, P95MS *int64
}

// ErrorRate is the share of the step's calls that failed; nil when there were none.
func (s ProviderStep) ErrorRate() *float64 { return share(s.Errors, s.Calls) }

func share(part, whole int) *float64 {
	if whole == 0 {
		return nil
	}
	return new(float64(part) / float64(whole))
}

// attemptsSQL says how a dialect reads the charge attempts in the payments' routing, a JSON
// document: joined to the payments as a table, one row per attempt, and the attempt's fields.
type attemptsSQL struct {
	from                         string
	provider, outcome, latencyMS string
}

var attemptsIn = map[string]attemptsSQL{
	// A function in FROM may read the tables before it. A routing whose attempts is no array (a
	// payment routed before attempts were kept) has none.
	dialect.Postgres: {
		from:      `jsonb_array_elements(CASE WHEN jsonb_typeof("payments"."routing" -> 'attempts') = 'array' THEN "payments"."routing" -> 'attempts' ELSE '[]'::jsonb END) AS "attempt"`,
		provider:  `"attempt" ->> 'provider'`,
		outcome:   `"attempt" ->> 'outcome'`,
		latencyMS: `("attempt" ->> 'latency_ms')::bigint`,
	},
	dialect.SQLite: {
		from:      "json_each(CASE WHEN json_type(`payments`.`routing`, '$.attempts') = 'array' THEN `payments`.`routing` ELSE '{\"attempts\":[]}' END, '$.attempts') AS `attempt`",
		provider:  "json_extract(`attempt`.`value`, '$.provider')",
		outcome:   "json_extract(`attempt`.`value`, '$.outcome')",
		latencyMS: "json_extract(`attempt`.`value`, '$.latency_ms')",
	},
}

// twoFigures rounds a whole number of milliseconds down to two significant figures, so that the
// latencies of a provider's step group into a few hundred values at most, however many calls.
func twoFigures(ms string) string {
	return fmt.Sprintf("CASE WHEN %[1]s < 100 THEN %[1]s WHEN %[1]s < 1000 THEN %[1]s / 10 * 10 "+
		"WHEN %[1]s < 10000 THEN %[1]s / 100 * 100 ELSE %[1]s / 1000 * 1000 END", ms)
}

// Overview reads how payments went over the period, for a holder of monitoring:read: everyone's,
// unless platform staff act for one merchant (Paygate-Merchant). Each figure is one grouped
// query over the rows of the period: the payments through their index on creation time, the
// refunds through theirs on status and creation time.
func (s *System) Overview(ctx context.Context, period OverviewPeriod) (Overview, error) {
	if err := auth.Authorize(ctx, auth.Overview); err != nil {
		return Overview{}, err
	}
	if p, _ := auth.PrincipalFrom(ctx); !p.ActsForAnother() {
		ctx = tenant.System(ctx)
	}
	to := s.Now().UTC().Truncate(period.Step).Add(period.Step)
	o := Overview{Period: period, From: to.Add(-period.Span), To: to}
	steps := int(period.Span / period.Step)
	o.Steps = make([]OverviewStep, steps)
	for i := range o.Steps {
		o.Steps[i].Start = o.From.Add(time.Duration(i) * period.Step)
	}
	if err := s.readPayments(ctx, &o); err != nil {
		return Overview{}, err
	}
	if err := s.readRefunds(ctx, &o); err != nil {
		return Overview{}, err
	}
	if err := s.readAttempts(ctx, &o); err != nil {
		return Overview{}, err
	}
	return o, nil
}

// stepOf is the SQL of the step a time column falls in, 0 to len(o.Steps)-1: compared with the
// steps' bounds as the driver passes any time, so it reads times as ent's predicates do.
func (o *Overview) stepOf(column string) entsql.Querier {
	return entsql.ExprFunc(func(b *entsql.Builder) {
		b.WriteString("CASE")
		for i := 1; i < len(o.Steps); i++ {
			b.WriteString(" WHEN " + column + " < ").Arg(o.Steps[i].Start).WriteString(fmt.Sprintf(" THEN %d", i-1))
		}
		b.WriteString(fmt.Sprintf(" ELSE %d END", len(o.Steps)-1))
	})
}

// stepTotal is how many rows of a currency a step holds, and the sum of their amounts.
type stepTotal struct {
	Step     int    `json:"step"`
	Currency string `json:"currency"`
	Count    int    `json:"count"`
	Total    int64  `json:"total"`
}

// totalsByStep groups a query's rows by the step their time falls in and their currency, counting
// them and summing amount.
func (o *Overview) totalsByStep(time, currency, amount string) func(*entsql.Selector) {
	return func(q *entsql.Selector) {
		q.Select().AppendSelectExprAs(o.stepOf(q.C(time)), "step").
			AppendSelectAs(q.C(currency), "currency").
			AppendSelectExprAs(entsql.Raw("COUNT(*)"), "count").
			AppendSelectExprAs(entsql.Raw("COALESCE(SUM("+q.C(amount)+"), 0)"), "total").
			GroupBy("step", q.C(currency))
	}
}

// currenciesOf lists the currencies of totals, in order.
func currenciesOf(totals []stepTotal) []string {
	currencies := map[string]bool{}
	for _, t := range totals {
		currencies[t.Currency] = true
	}
	return slices.Sorted(maps.Keys(currencies))
}

// readPayments reads the payments made in each step and what they captured, by currency, and
// why those that failed failed.
func (s *System) readPayments(ctx context.Context, o *Overview) error {
	var totals []stepTotal
	err := s.Client.Payment.Query().Where(payment.CreatedAtGTE(o.From), payment.CreatedAtLT(o.To)).
		Modify(o.totalsByStep(payment.FieldCreatedAt, payment.FieldCurrency, payment.FieldAmountCaptured)).Scan(ctx, &totals)
	if err != nil {
		return err
	}
	currencies := currenciesOf(totals)
	for i := range o.Steps {
		for _, currency := range currencies {
			o.Steps[i].Volume = append(o.Steps[i].Volume, money.Amount{Currency: currency})
		}
	}
	for _, t := range totals {
		step := &o.Steps[t.Step]
		step.Payments += t.Count
		step.Volume[slices.Index(currencies, t.Currency)].Minor = t.Total
	}

	var reasons []struct {
		Reason string `json:"reason"`
		Count  int    `json:"count"`
	}
	err = s.Client.Payment.Query().
		Where(payment.CreatedAtGTE(o.From), payment.CreatedAtLT(o.To), payment.StatusEQ(state.PaymentFailed), payment.FailureCodeNotNil()).
		Modify(func(q *entsql.Selector) {
			q.Select().AppendSelectAs(q.C(payment.FieldFailureCode), "reason").
				AppendSelectExprAs(entsql.Raw("COUNT(*)"), "count").
				GroupBy(q.C(payment.FieldFailureCode))
		}).Scan(ctx, &reasons)
	if err != nil {
		return err
	}
	for _, row := range reasons {
		o.DeclineReasons = append(o.DeclineReasons, ReasonCount(row))
	}
	slices.SortFunc(o.DeclineReasons, func(a, b ReasonCount) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Reason, b.Reason))
	})
	return nil
}

// readRefunds reads the refunds asked in each step that did not fail, by currency.
func (s *System) readRefunds(ctx context.Context, o *Overview) error {
	var totals []stepTotal
	err := s.Client.Refund.Query().Where(refund.StatusIn(state.RefundPending, state.RefundSucceeded), refund.CreatedAtGTE(o.From), refund.CreatedAtLT(o.To)).
		Modify(o.totalsByStep(refund.FieldCreatedAt, refund.FieldCurrency, refund.FieldAmount)).Scan(ctx, &totals)
	if err != nil {
		return err
	}
	currencies := currenciesOf(totals)
	for i := range o.Steps {
		for _, currency := range currencies {
			o.Steps[i].Refunds = append(o.Steps[i].Refunds, RefundTotal{Amount: money.Amount{Currency: currency}})
		}
	}
	for _, t := range totals {
		o.Steps[t.Step].Refunds[slices.Index(currencies, t.Currency)] = RefundTotal{Count: t.Count, Amount: money.Amount{Minor: t.Total, Currency: t.Currency}}
	}
	return nil
}

// readAttempts reads every provider's charge calls in each step from the payments' routing: the
// approvals and declines, the failures, and the latencies' p50 and p95.
func (s *System) readAttempts(ctx context.Context, o *Overview) error {
	attempts, ok := attemptsIn[s.Dialect]
	if !ok {
		return fmt.Errorf("metrics: no overview of charge attempts on %q", s.Dialect)
	}
	var outcomes []struct {
		Step     int    `json:"step"`
		Provider string `json:"attempt_provider"`
		Outcome  string `json:"attempt_outcome"`
		Count    int    `json:"count"`
	}
	err := s.Client.Payment.Query().Where(payment.CreatedAtGTE(o.From), payment.CreatedAtLT(o.To)).
		Modify(func(q *entsql.Selector) {
			q.AppendFromExpr(entsql.Raw(attempts.from)).
				Select().AppendSelectExprAs(o.stepOf(q.C(payment.FieldCreatedAt)), "step").
				AppendSelectExprAs(entsql.Raw(attempts.provider), "attempt_provider").
				AppendSelectExprAs(entsql.Raw(attempts.outcome), "attempt_outcome").
				AppendSelectExprAs(entsql.Raw("COUNT(*)"), "count").
				GroupBy("step", "attempt_provider", "attempt_outcome")
		}).Scan(ctx, &outcomes)
	if err != nil {
		return err
	}
	var latencies []struct {
		Step      int    `json:"step"`
		Provider  string `json:"attempt_provider"`
		LatencyMS int64  `json:"attempt_latency_ms"`
		Count     int    `json:"count"`
	}
	err = s.Client.Payment.Query().Where(payment.CreatedAtGTE(o.From), payment.CreatedAtLT(o.To)).
		Modify(func(q *entsql.Selector) {
			q.AppendFromExpr(entsql.Raw(attempts.from)).
				Select().AppendSelectExprAs(o.stepOf(q.C(payment.FieldCreatedAt)), "step").
				AppendSelectExprAs(entsql.Raw(attempts.provider), "attempt_provider").
				AppendSelectExprAs(entsql.Raw(twoFigures(attempts.latencyMS)), "attempt_latency_ms").
				AppendSelectExprAs(entsql.Raw("COUNT(*)"), "count").
				GroupBy("step", "attempt_provider", "attempt_latency_ms").
				OrderBy("step", "attempt_provider", "attempt_latency_ms")
		}).Scan(ctx, &latencies)
	if err != nil {
		return err
	}

	series := map[string]*ProviderSeries{}
	seriesOf := func(provider string) *ProviderSeries {
		if p, ok := series[provider]; ok {
			return p
		}
		p := &ProviderSeries{Provider: provider, Steps: make([]ProviderStep, len(o.Steps))}
		for i := range p.Steps {
			p.Steps[i].Start = o.Steps[i].Start
		}
		series[provider] = p
		return p
	}
	for _, row := range outcomes {
		step := &seriesOf(row.Provider).Steps[row.Step]
		step.Calls += row.Count
		switch row.Outcome {
		case routing.OutcomeApproved:
			o.Steps[row.Step].Approved += row.Count
		case routing.OutcomeDeclined:
			o.Steps[row.Step].Declined += row.Count
		case routing.OutcomeUnavailable, routing.OutcomeUnknown:
			step.Errors += row.Count
		}
	}
	// The latencies come in order within each provider's step: a percentile is the first latency
	// whose running count reaches its rank (nearest rank) among the step's latencies.
	type providerStep struct {
		provider string
		step     int
	}
	counted := map[providerStep]int{}
	for _, row := range latencies {
		counted[providerStep{row.Provider, row.Step}] += row.Count
	}
	before := map[providerStep]int{}
	for _, row := range latencies {
		key := providerStep{row.Provider, row.Step}
		step := &seriesOf(row.Provider).Steps[row.Step]
		below, total := before[key], counted[key]
		before[key] = below + row.Count
		if rank := nearestRank(50, total); step.P50MS == nil && rank <= below+row.Count {
			step.P50MS = new(row.LatencyMS)
		}
		if rank := nearestRank(95, total); step.P95MS == nil && rank <= below+row.Count {
			step.P95MS = new(row.LatencyMS)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(series)) {
		o.Providers = append(o.Providers, *series[name])
	}
	return nil
}

// nearestRank is the 1-based rank of the percent-th percentile of n values: the least rank whose
// share of n reaches percent, counted in whole numbers.
func nearestRank(percent, n int) int {
	return max((percent*n+99)/100, 1)
}
