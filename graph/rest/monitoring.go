package rest

import (
	"net/http"
	"time"

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
