package gateway

import (
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// metrics are the server's own Prometheus series. Guarded-request series
// (contracts, codes) belong to the guard.
type metrics struct {
	requests           *prometheus.CounterVec
	duration           *prometheus.HistogramVec
	breakerTransitions *prometheus.CounterVec
}

func newMetrics(reg *prometheus.Registry, breakerState func() float64) *metrics {
	register(reg, collectors.NewGoCollector())
	register(reg, collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	register(reg, prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "gateway_upstream_breaker_state",
		Help: "State of the upstream circuit breaker: 0 closed, 1 half-open, 2 open.",
	}, breakerState))
	return &metrics{
		requests: counterVec(reg, "gateway_http_requests_total",
			"HTTP requests answered, by route pattern, method and status.",
			"route", "method", "code"),
		duration: register(reg, prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "gateway_http_request_duration_seconds",
			Help: "Time from request to the end of the response (streams included), by route pattern.",
			// 1 ms to about 4 minutes: pass-through calls take
			// milliseconds, generations minutes.
			Buckets: prometheus.ExponentialBuckets(0.001, 4, 10),
		}, []string{"route"})),
		breakerTransitions: counterVec(reg, "gateway_upstream_breaker_transitions_total",
			"Transitions of the upstream circuit breaker, by new state.",
			"to"),
	}
}

// register registers c, or returns the collector already registered under
// the same descriptors (two servers on one registry, a Go collector the
// caller registered first).
func register[T prometheus.Collector](reg *prometheus.Registry, c T) T {
	err := reg.Register(c)
	var are prometheus.AlreadyRegisteredError
	if errors.As(err, &are) {
		if existing, ok := are.ExistingCollector.(T); ok {
			return existing
		}
	}
	return c
}

// counterVec registers (see register) a counter vector of name and
// help, labelled by labels.
func counterVec(reg *prometheus.Registry, name, help string, labels ...string) *prometheus.CounterVec {
	return register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels))
}

func (m *metrics) observe(route, method string, status int, elapsed time.Duration) {
	if route == "" {
		route = "none"
	}
	m.requests.WithLabelValues(route, metricMethod(method), strconv.Itoa(status)).Inc()
	m.duration.WithLabelValues(route).Observe(elapsed.Seconds())
}

// metricMethod bounds the method label: clients may send any token.
func metricMethod(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions, http.MethodConnect, http.MethodTrace:
		return m
	}
	return "OTHER"
}
