package rest

import (
	"net/http"
	"strings"
	"time"

	"github.com/paygate/paygate/graph/model"

	"github.com/paygate/paygate/internal/metrics"
	"github.com/paygate/paygate/internal/money"

	"github.com/paygate/paygate/internal/web"
)

// ProviderStatus serves GET /api/v1/monitoring/providers: how each provider is doing.
func (h *Handlers) ProviderStatus(w http.ResponseWriter, r *http.Request) {
	statuses, err := h.query.ProviderStatus(r.Context())
	if err != nil {
		web.WriteError(w, r, err, nil)
		return
	}
	web.WriteJSON(w, http.StatusOK, statuses)
}

// systemMetricsJSON is the REST shape of the monitoring figures.
type systemMetricsJSON struct {
	UptimeS  int64 `json:"uptime_s"`
	WindowH  int   `json:"window_h"`
	Requests struct {
		Total     int64    `json:"total"`
		PerSecond float64  `json:"per_second"`
		Errors    int64    `json:"errors"`
		P50MS     *float64 `json:"p50_ms"`
		P99MS     *float64 `json:"p99_ms"`
	} `json:"requests"`
	Payments struct {
		ByStatus map[string]int           `json:"by_status"`
		Volume   map[string]money.Decimal `json:"volume"`
	} `json:"payments"`
	Webhooks struct {
		Received  int `json:"received"`
		Processed int `json:"processed"`
		Ignored   int `json:"ignored"`
		Failed    int `json:"failed"`
		Dead      int `json:"dead"`
	} `json:"webhooks"`
	Database struct {
		Open      int   `json:"open"`
		InUse     int   `json:"in_use"`
		WaitCount int64 `json:"wait_count"`
	} `json:"database"`
	Runtime struct {
		Goroutines int   `json:"goroutines"`
		HeapBytes  int64 `json:"heap_bytes"`
	} `json:"runtime"`
}

// SystemMetrics serves GET /api/v1/monitoring/metrics: what a dashboard shows.
func (h *Handlers) SystemMetrics(w http.ResponseWriter, r *http.Request) {
	figures, err := h.query.SystemMetrics(r.Context())
	if err != nil {
		web.WriteError(w, r, err, nil)
		return
	}
	var answer systemMetricsJSON
	answer.UptimeS = int64(figures.Uptime / time.Second)
	answer.WindowH = int(metrics.SystemWindow / time.Hour)
	answer.Requests.Total, answer.Requests.PerSecond, answer.Requests.Errors = figures.Requests.Total, figures.Requests.PerSecond, figures.Requests.Errors
	answer.Requests.P50MS, answer.Requests.P99MS = figures.Requests.P50MS, figures.Requests.P99MS
	answer.Payments.ByStatus = map[string]int{}
	for _, s := range figures.Payments.ByStatus {
		answer.Payments.ByStatus[s.Status] = s.Count
	}
	answer.Payments.Volume = map[string]money.Decimal{}
	for _, amount := range figures.Payments.Volume {
		answer.Payments.Volume[amount.Currency] = amount.Decimal()
	}
	answer.Webhooks.Received, answer.Webhooks.Processed, answer.Webhooks.Ignored = figures.Webhooks.Received, figures.Webhooks.Processed, figures.Webhooks.Ignored
	answer.Webhooks.Failed, answer.Webhooks.Dead = figures.Webhooks.Failed, figures.Webhooks.Dead
	answer.Database.Open, answer.Database.InUse, answer.Database.WaitCount = figures.Database.OpenConnections, figures.Database.InUse, figures.Database.WaitCount
	answer.Runtime.Goroutines, answer.Runtime.HeapBytes = figures.Runtime.Goroutines, figures.Runtime.HeapBytes
	web.WriteJSON(w, http.StatusOK, answer)
}

// overviewJSON is the REST shape of an overview: amounts as exact decimal strings by currency.
type overviewJSON struct {
	Period         string             `json:"period"`
	From           time.Time          `json:"from"`
	To             time.Time          `json:"to"`
	StepS          int64              `json:"step_s"`
	Steps          []overviewStepJSON `json:"steps"`
	DeclineReasons []reasonCountJSON  `json:"decline_reasons"`
	Providers      []providerJSON     `json:"providers"`
}

type overviewStepJSON struct {
	Start        time.Time                  `json:"start"`
	Payments     int                        `json:"payments"`
	Volume       map[string]money.Decimal   `json:"volume"`
	Approved     int                        `json:"approved"`
	Declined     int                        `json:"declined"`
	ApprovalRate *float64                   `json:"approval_rate"`
	Refunds      map[string]refundTotalJSON `json:"refunds"`
}

type refundTotalJSON struct {
	Count  int           `json:"count"`
	Amount money.Decimal `json:"amount"`
}

type reasonCountJSON struct {
	Reason string `json:"reason"`
	Count  int    `json:"count"`
}

type providerJSON struct {
	Provider string             `json:"provider"`
	Steps    []providerStepJSON `json:"steps"`
}

type providerStepJSON struct {
	Start     time.Time `json:"start"`
	Calls     int       `json:"calls"`
	Errors    int       `json:"errors"`
	ErrorRate *float64  `json:"error_rate"`
	P50MS     *int64    `json:"p50_ms"`
	P95MS     *int64    `json:"p95_ms"`
}

// Overview serves GET /api/v1/monitoring/overview?period=day|week|month (day when left out): how
// payments went, step by step.
func (h *Handlers) Overview(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if err := knownParams(q, "period"); err != nil {
		web.WriteError(w, r, err, nil)
		return
	}
	period := metrics.OverviewDay
	if q.Has("period") {
		var err error
		if period, err = metrics.OverviewPeriodNamed(q.Get("period"), "period"); err != nil {
			web.WriteError(w, r, err, nil)
			return
		}
	}
	o, err := h.query.Overview(r.Context(), model.OverviewPeriod(strings.ToUpper(period.Name)))
	if err != nil {
		web.WriteError(w, r, err, nil)
		return
	}
	answer := overviewJSON{Period: o.Period.Name, From: o.From, To: o.To, StepS: int64(o.Period.Step / time.Second),
		Steps: []overviewStepJSON{}, DeclineReasons: []reasonCountJSON{}, Providers: []providerJSON{}}
	for _, step := range o.Steps {
		s := overviewStepJSON{Start: step.Start, Payments: step.Payments, Volume: map[string]money.Decimal{},
			Approved: step.Approved, Declined: step.Declined, ApprovalRate: step.ApprovalRate(), Refunds: map[string]refundTotalJSON{}}
		for _, amount := range step.Volume {
			s.Volume[amount.Currency] = amount.Decimal()
		}
		for _, total := range step.Refunds {
			s.Refunds[total.Amount.Currency] = refundTotalJSON{Count: total.Count, Amount: total.Amount.Decimal()}
		}
		answer.Steps = append(answer.Steps, s)
	}
	for _, reason := range o.DeclineReasons {
		answer.DeclineReasons = append(answer.DeclineReasons, reasonCountJSON(reason))
	}
	for _, p := range o.Providers {
		series := providerJSON{Provider: p.Provider, Steps: []providerStepJSON{}}
		for _, step := range p.Steps {
			series.Steps = append(series.Steps, providerStepJSON{Start: step.Start, Calls: step.Calls, Errors: step.Errors,
				ErrorRate: step.ErrorRate(), P50MS: step.P50MS, P95MS: step.P95MS})
		}
		answer.Providers = append(answer.Providers, series)
	}
	web.WriteJSON(w, http.StatusOK, answer)
}
