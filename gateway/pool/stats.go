package pool

import (
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// MemberStats is one member of a [Pool] as the operator sees it.
type MemberStats struct {
	URL    string `json:"url"`
	Weight int    `json:"weight"`
	// Healthy is false while the member fails its health checks.
	Healthy bool `json:"healthy"`
	// Breaker is its breaker's state: closed, half-open or open.
	Breaker  string `json:"breaker"`
	InFlight int64  `json:"in_flight"`
	// Requests and Errors count its round trips since start, and those
	// that failed (unreachable, timed out, breaker open, 5xx).
	Requests uint64 `json:"requests"`
	Errors   uint64 `json:"errors"`
	Version  string `json:"version,omitempty"`
	// Models and Loaded are the models its last check listed, and those
	// in memory.
	Models []string `json:"models"`
	Loaded int      `json:"models_loaded"`
	// LastError is why its last check failed.
	LastError string    `json:"last_error,omitempty"`
	CheckedAt time.Time `json:"checked_at,omitzero"`
}

// Stats returns every member's state, in configuration order.
func (p *Pool) Stats() []MemberStats {
	out := make([]MemberStats, 0, len(p.members))
	for _, m := range p.members {
		m.mu.Lock()
		h := m.h
		m.mu.Unlock()
		out = append(out, MemberStats{URL: m.name, Weight: m.weight, Healthy: h.healthy,
			Breaker: m.client.Load().State().String(), InFlight: m.inflight.Load(),
			Requests: m.requests.Load(), Errors: m.failures.Load(), Version: h.version,
			Models: append([]string{}, slices.Sorted(slices.Values(h.names))...), Loaded: len(h.loaded),
			LastError: h.err, CheckedAt: h.at})
	}
	return out
}

// Ready reports whether at least one member is healthy with its breaker
// not open: /readyz's answer for a pool.
func (p *Pool) Ready() bool {
	for _, c := range p.candidates("") {
		if c.Healthy && !c.Open {
			return true
		}
	}
	return false
}

// Collector returns the Prometheus series of the pool's members, labelled
// by upstream URL: requests in flight, requests and errors, breaker state
// (0 closed, 1 half-open, 2 open), health and models loaded.
func (p *Pool) Collector() prometheus.Collector { return poolCollector{p} }

type poolCollector struct{ p *Pool }

var (
	descInFlight = prometheus.NewDesc("gateway_upstream_in_flight", "Requests sent to the upstream whose answer is not yet read to its end.", []string{"upstream"}, nil)
	descRequests = prometheus.NewDesc("gateway_upstream_requests_total", "Round trips sent to the upstream.", []string{"upstream"}, nil)
	descErrors   = prometheus.NewDesc("gateway_upstream_errors_total", "Round trips to the upstream that failed: unreachable, timed out, breaker open or 5xx.", []string{"upstream"}, nil)
	descBreaker  = prometheus.NewDesc("gateway_upstream_member_breaker_state", "State of the upstream's circuit breaker: 0 closed, 1 half-open, 2 open.", []string{"upstream"}, nil)
	descHealthy  = prometheus.NewDesc("gateway_upstream_healthy", "1 while the upstream passes its health checks, else 0.", []string{"upstream"}, nil)
	descLoaded   = prometheus.NewDesc("gateway_upstream_models_loaded", "Models the upstream had in memory at its last health check.", []string{"upstream"}, nil)
)

func (c poolCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descInFlight, descRequests, descErrors, descBreaker, descHealthy, descLoaded} {
		ch <- d
	}
}

func (c poolCollector) Collect(ch chan<- prometheus.Metric) {
	for _, m := range c.p.members {
		m.mu.Lock()
		healthy, loaded := m.h.healthy, len(m.h.loaded)
		m.mu.Unlock()
		h := 0.0
		if healthy {
			h = 1
		}
		ch <- prometheus.MustNewConstMetric(descInFlight, prometheus.GaugeValue, float64(m.inflight.Load()), m.name)
		ch <- prometheus.MustNewConstMetric(descRequests, prometheus.CounterValue, float64(m.requests.Load()), m.name)
		ch <- prometheus.MustNewConstMetric(descErrors, prometheus.CounterValue, float64(m.failures.Load()), m.name)
		ch <- prometheus.MustNewConstMetric(descBreaker, prometheus.GaugeValue, float64(m.client.Load().State()), m.name)
		ch <- prometheus.MustNewConstMetric(descHealthy, prometheus.GaugeValue, h, m.name)
		ch <- prometheus.MustNewConstMetric(descLoaded, prometheus.GaugeValue, float64(loaded), m.name)
	}
}
