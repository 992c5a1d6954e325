package gateway

import (
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/contractgateway/gateway/middleware"
)

// stats keeps the guarded requests' figures since start, for
// GET /admin/stats: which model broke which rule how often, what the
// gateway did about it and what it cost, readable without a Prometheus.
// It holds no prompt or output.
type stats struct {
	mu       sync.Mutex
	since    time.Time
	requests int
	// counts is by model × code × status; code "" is a request without
	// violations.
	counts     map[countKey]int
	byModel    map[string]map[string]int // model → status → requests
	llmCalls   int
	localFixes int
	// savedByLocal counts requests that local repair alone brought into
	// contract: each would have cost a model call without it.
	savedByLocal int
	rungs        map[string]int
	cache        map[string]int
	tokens       tokenStats
	latency      []float64 // the last latencyWindow, in milliseconds
	next         int
	failures     []failure // the last recentFailures, newest last
}

type countKey struct{ model, code, status string }

type tokenStats struct {
	FirstPrompt  int `json:"first_prompt"`
	FirstOutput  int `json:"first_output"`
	RepairPrompt int `json:"repair_prompt"`
	RepairOutput int `json:"repair_output"`
}

type failure struct {
	Time      time.Time `json:"time"`
	RequestID string    `json:"request_id"`
	Contract  string    `json:"contract"`
	Model     string    `json:"model"`
	Status    string    `json:"status"`
	Codes     []string  `json:"codes"`
	Error     string    `json:"error,omitempty"`
}

const (
	latencyWindow  = 1024
	recentFailures = 20
)

func newStats() *stats {
	return &stats{since: time.Now(), counts: map[countKey]int{}, byModel: map[string]map[string]int{},
		rungs: map[string]int{}, cache: map[string]int{}}
}

// observe adds one guarded request.
func (s *stats) observe(ev middleware.Event) {
	contract, model := ev.Contract, ev.Model
	if ev.Route == middleware.RouteAdHoc {
		contract = middleware.RouteAdHoc
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests++
	if s.byModel[model] == nil {
		s.byModel[model] = map[string]int{}
	}
	s.byModel[model][ev.Status]++
	if len(ev.CodesBefore) == 0 {
		s.counts[countKey{model, "", ev.Status}]++
	}
	for _, c := range ev.CodesBefore {
		s.counts[countKey{model, c, ev.Status}]++
	}
	s.llmCalls += ev.LLMCalls
	s.localFixes += ev.LocalFixes
	if ev.Status == "repaired" && ev.LLMCalls == 0 && !ev.CacheHit && !ev.Coalesced {
		s.savedByLocal++
	}
	if r := acceptedRung(ev); r != "" {
		s.rungs[r]++
	}
	if ev.Cache != "" {
		s.cache[ev.Cache]++
	}
	s.tokens.FirstPrompt += ev.FirstTokens.PromptTokens
	s.tokens.FirstOutput += ev.FirstTokens.OutputTokens
	s.tokens.RepairPrompt += ev.RepairTokens.PromptTokens
	s.tokens.RepairOutput += ev.RepairTokens.OutputTokens
	ms := float64(ev.Latency.Microseconds()) / 1000
	if len(s.latency) < latencyWindow {
		s.latency = append(s.latency, ms)
	} else {
		s.latency[s.next] = ms
		s.next = (s.next + 1) % latencyWindow
	}
	if ev.Status != "valid" && ev.Status != "repaired" {
		s.failures = append(s.failures, failure{Time: time.Now().UTC(), RequestID: ev.RequestID, Contract: contract,
			Model: model, Status: ev.Status, Codes: slices.Clone(ev.CodesAfter), Error: ev.Error})
		if len(s.failures) > recentFailures {
			s.failures = s.failures[1:]
		}
	}
}

// acceptedRung is the rung whose answer the client got: "first" for an
// answer valid as written, "cache" for a hit, the last rung tried for a
// repaired one, "fallback:<mode>" or "error" otherwise.
func acceptedRung(ev middleware.Event) string {
	switch {
	case ev.CacheHit:
		return "cache"
	case ev.Coalesced:
		return "coalesced"
	case ev.Status == "valid":
		return "first"
	case ev.Status == middleware.StatusError:
		return "error"
	}
	for i := len(ev.Rungs) - 1; i >= 0; i-- {
		r := ev.Rungs[i]
		if ev.Status == "repaired" && (strings.HasPrefix(r, "fallback:") || r == "merge") {
			continue
		}
		if strings.HasPrefix(r, "rerun:") {
			return "rerun"
		}
		return r
	}
	return ev.Status
}

// statsBody is the JSON of GET /admin/stats.
type statsBody struct {
	Since        time.Time                 `json:"since"`
	Requests     int                       `json:"requests"`
	Counts       []countRow                `json:"counts"`
	ByModel      map[string]map[string]int `json:"by_model"`
	LLMCalls     int                       `json:"llm_calls"`
	LocalFixes   int                       `json:"local_fixes"`
	SavedByLocal int                       `json:"llm_calls_saved_by_local_repair"`
	Rungs        map[string]int            `json:"accepted_by_rung"`
	Cache        map[string]int            `json:"cache"`
	CacheHitRate float64                   `json:"cache_hit_rate"`
	Tokens       tokenStats                `json:"tokens"`
	LatencyMS    map[string]float64        `json:"latency_ms"`
	Failures     []failure                 `json:"recent_failures"`
}

type countRow struct {
	Model  string `json:"model"`
	Code   string `json:"code"`
	Status string `json:"status"`
	Count  int    `json:"count"`
}

func (s *stats) snapshot() statsBody {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := statsBody{Since: s.since.UTC(), Requests: s.requests, LLMCalls: s.llmCalls, LocalFixes: s.localFixes,
		SavedByLocal: s.savedByLocal, Rungs: copyMap(s.rungs), Cache: copyMap(s.cache), Tokens: s.tokens,
		LatencyMS: map[string]float64{}, Failures: slices.Clone(s.failures), Counts: []countRow{},
		ByModel: map[string]map[string]int{}}
	for m, st := range s.byModel {
		b.ByModel[m] = copyMap(st)
	}
	if b.Failures == nil {
		b.Failures = []failure{}
	}
	for k, n := range s.counts {
		b.Counts = append(b.Counts, countRow{k.model, k.code, k.status, n})
	}
	slices.SortFunc(b.Counts, func(a, c countRow) int {
		return strings.Compare(a.Model+"\x00"+a.Code+"\x00"+a.Status, c.Model+"\x00"+c.Code+"\x00"+c.Status)
	})
	if looked := s.cache["hit"] + s.cache["miss"]; looked > 0 {
		b.CacheHitRate = float64(s.cache["hit"]) / float64(looked)
	}
	lat := slices.Clone(s.latency)
	slices.Sort(lat)
	for _, p := range []struct {
		name string
		q    float64
	}{{"p50", 50}, {"p90", 90}, {"p99", 99}} {
		if len(lat) > 0 {
			i := int(p.q/100*float64(len(lat))+0.5) - 1
			b.LatencyMS[p.name] = lat[max(0, min(i, len(lat)-1))]
		}
	}
	return b
}

func copyMap(m map[string]int) map[string]int {
	out := make(map[string]int, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// statsRoute registers GET /admin/stats.
func statsRoute(g *echo.Group, s *stats) {
	g.GET("/admin/stats", func(c echo.Context) error {
		return c.JSON(http.StatusOK, s.snapshot())
	})
}
