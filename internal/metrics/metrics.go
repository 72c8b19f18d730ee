// Package metrics counts what this server does, for Prometheus at /metrics and for the
// monitoring API's figures. Every label takes a bounded set of values (route patterns, known
// methods, status codes, providers, states, ISO currencies), never a raw path or an id.
package metrics

import (
	"database/sql"
	"math"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/paygate/paygate/internal/routing"
)

// durationSamples is how many recent requests the request percentiles are taken over.
const durationSamples = 1024

// Metrics are one server's counters. A nil *Metrics counts nothing, so services built without
// one (commands, unit tests) need no stand-in.
type Metrics struct {
	registry     *prometheus.Registry
	httpRequests *prometheus.CounterVec
	httpDuration *prometheus.HistogramVec
	// requestSeries holds a *requestSeries by requestSeriesKey.
	requestSeries    sync.Map
	payments         *prometheus.CounterVec
	providerRequests *prometheus.CounterVec
	providerDuration *prometheus.HistogramVec
	webhookEvents    *prometheus.CounterVec
	deliveries       *prometheus.CounterVec
	deliveryDuration prometheus.Histogram
	// deliveryQueue counts the deliveries not delivered yet; queueCount is its last count, kept a
	// second, so scrapes (public ones included) cost the database one count a second at most.
	deliveryQueue atomic.Pointer[func() (int, error)]
	queueMu       sync.Mutex
	queueCount    float64
	queueCountAt  time.Time
	providers     Providers

	started time.Time
	now     func() time.Time

	mu sync.Mutex
	// requests and failures count the API requests since start; durations is a ring of the latest.
	requests, failures int64
	durations          []time.Duration
	next               int
	// perSecond counts the requests of each of the last 60 seconds, by Unix second.
	perSecond [60]secondCount
	// providerCalls are each provider's calls, by name.
	providerCalls map[string]*providerCalls
}

type secondCount struct {
	second int64
	count  int64
}

// New returns the counters of a server over db, whose pool figures it reports, and of its calls
// to providers, whose circuits it reads at each scrape.
func New(db *sql.DB, providers Providers, now func() time.Time) *Metrics {
	m := &Metrics{
		registry: prometheus.NewRegistry(),
		httpRequests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "paygate_http_requests_total", Help: "HTTP requests answered, by route pattern, method and status code.",
		}, []string{"route", "method", "code"}),
		httpDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "paygate_http_request_duration_seconds", Help: "Time to answer HTTP requests, by route pattern and method.",
			Buckets: prometheus.DefBuckets,
		}, []string{"route", "method"}),
		payments: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "paygate_payments_total", Help: "Payments made through this server, by the status they were answered with, provider and currency.",
		}, []string{"status", "provider", "currency"}),
		providerRequests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "paygate_provider_requests_total", Help: "Calls to the payment providers, by provider and outcome (answered or error).",
		}, []string{"provider", "outcome"}),
		providerDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "paygate_provider_request_duration_seconds", Help: "Time the payment providers took to answer, by provider.",
			Buckets: []float64{.05, .1, .25, .5, 1, 2.5, 5, 10, 20},
		}, []string{"provider"}),
		webhookEvents: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "paygate_webhook_events_total", Help: "Provider webhook events stored (received) and processed by this server, by provider and status.",
		}, []string{"provider", "status"}),
		deliveries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "paygate_webhook_deliveries_total", Help: "Tries at delivering events to merchants' webhook endpoints made by this server, by outcome (delivered, retrying, failed, gone).",
		}, []string{"outcome"}),
		deliveryDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "paygate_webhook_delivery_duration_seconds", Help: "Time merchants' webhook endpoints took to answer a delivery, or to fail it.",
			Buckets: []float64{.05, .1, .25, .5, 1, 2.5, 5, 10, 15},
		}),
		providers:     providers,
		providerCalls: map[string]*providerCalls{},
		started:       now(),
		now:           now,
	}
	m.registry.MustRegister(m.httpRequests, m.httpDuration, m.payments, m.providerRequests, m.providerDuration, m.webhookEvents,
		m.deliveries, m.deliveryDuration,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "paygate_webhook_delivery_queue", Help: "Deliveries of events to merchants' webhook endpoints not delivered yet (pending), in the database all servers share.",
		}, m.countDeliveryQueue),
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		collectors.NewDBStatsCollector(db, "paygate"),
	)
	for _, name := range providers.Names() {
		m.registry.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "paygate_provider_circuit_open", Help: "1 while this server's circuit to the provider is open, else 0.",
			ConstLabels: prometheus.Labels{"provider": name},
		}, func() float64 {
			if providers.Circuit(name) != routing.Closed {
				return 1
			}
			return 0
		}))
	}
	return m
}

// Handler serves the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{})
}

// knownMethods are the methods counted by name; any other is counted as OTHER, so that a client
// inventing methods cannot grow the series without bound.
var knownMethods = []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodOptions}

// Request counts an answered request: route is the pattern that served it ("" for none).
func (m *Metrics) Request(route, method string, status int, took time.Duration) {
	if m == nil {
		return
	}
	if !slices.Contains(knownMethods, method) {
		method = "OTHER"
	}
	if route == "" {
		route = "unmatched"
	}
	series := m.requestSeriesOf(requestSeriesKey{route, method, status})
	series.count.Inc()
	series.duration.Observe(took.Seconds())

	second := m.now().Unix()
	m.mu.Lock()
	defer m.mu.Unlock()
	m.requests++
	if status >= 500 {
		m.failures++
	}
	if len(m.durations) < durationSamples {
		m.durations = append(m.durations, took)
	} else {
		m.durations[m.next] = took
		m.next = (m.next + 1) % durationSamples
	}
	slot := &m.perSecond[second%int64(len(m.perSecond))]
	if slot.second != second {
		*slot = secondCount{second: second}
	}
	slot.count++
}

// requestSeriesKey names a request's series: its labels, each from a bounded set.
type requestSeriesKey struct {
	route, method string
	status        int
}

// requestSeries are a request's counter and histogram, looked up once per labels: finding them in
// their vectors hashes the labels and takes the vectors' locks, for every request.
type requestSeries struct {
	count    prometheus.Counter
	duration prometheus.Observer
}

func (m *Metrics) requestSeriesOf(key requestSeriesKey) *requestSeries {
	if series, ok := m.requestSeries.Load(key); ok {
		return series.(*requestSeries)
	}
	series, _ := m.requestSeries.LoadOrStore(key, &requestSeries{
		count:    m.httpRequests.WithLabelValues(key.route, key.method, strconv.Itoa(key.status)),
		duration: m.httpDuration.WithLabelValues(key.route, key.method),
	})
	return series.(*requestSeries)
}

// PaymentAnswered counts a payment as its creation answered it.
func (m *Metrics) PaymentAnswered(status, provider, currency string) {
	if m == nil {
		return
	}
	if provider == "" {
		provider = "none" // no provider could take it
	}
	m.payments.WithLabelValues(status, provider, currency).Inc()
}

// WebhookEvent counts a provider's webhook event reaching status (received when stored).
func (m *Metrics) WebhookEvent(provider, status string) {
	if m == nil {
		return
	}
	m.webhookEvents.WithLabelValues(provider, status).Inc()
}

// WebhookDelivery counts a try at delivering an event to a merchant's endpoint.
func (m *Metrics) WebhookDelivery(outcome string, took time.Duration) {
	if m == nil {
		return
	}
	m.deliveries.WithLabelValues(outcome).Inc()
	m.deliveryDuration.Observe(took.Seconds())
}

// CountDeliveryQueue sets how the deliveries not delivered yet are counted at each scrape.
func (m *Metrics) CountDeliveryQueue(count func() (int, error)) {
	if m != nil {
		m.deliveryQueue.Store(&count)
	}
}

func (m *Metrics) countDeliveryQueue() float64 {
	count := m.deliveryQueue.Load()
	if count == nil {
		return 0
	}
	m.queueMu.Lock()
	defer m.queueMu.Unlock()
	if now := m.now(); now.Sub(m.queueCountAt) >= time.Second || now.Before(m.queueCountAt) {
		m.queueCountAt = now
		if n, err := (*count)(); err != nil {
			m.queueCount = math.NaN() // unknown, not empty
		} else {
			m.queueCount = float64(n)
		}
	}
	return m.queueCount
}

// RequestFigures are this server's API requests since it started.
type RequestFigures struct {
	Total int64
	// PerSecond is the mean over the last minute.
	PerSecond float64
	// Errors counts the requests answered with a server error (5xx).
	Errors int64
	// P50MS and P99MS are taken over the latest requests; nil before any.
	P50MS, P99MS *float64
}

// Requests returns this server's request figures.
func (m *Metrics) Requests() RequestFigures {
	now := m.now().Unix()
	m.mu.Lock()
	figures := RequestFigures{Total: m.requests, Errors: m.failures}
	var lastMinute int64
	for _, slot := range m.perSecond {
		if now-slot.second < int64(len(m.perSecond)) && slot.second <= now {
			lastMinute += slot.count
		}
	}
	sorted := slices.Clone(m.durations)
	m.mu.Unlock()
	figures.PerSecond = float64(lastMinute) / float64(len(m.perSecond))
	slices.Sort(sorted)
	figures.P50MS, figures.P99MS = PercentileMS(sorted, 0.50), PercentileMS(sorted, 0.99)
	return figures
}

// Uptime is how long this server has run.
func (m *Metrics) Uptime() time.Duration { return m.now().Sub(m.started) }
