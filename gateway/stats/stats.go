// Package stats counts guarded requests since start for GET /admin/stats
// and the dashboard: requests and violations by contract, model and
// status, the rung each answer came from, model calls, cache results,
// tokens, latency percentiles over a bounded sample, and the latest
// failures. Like the metrics it holds no prompt or output.
package stats

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/contractgateway/gateway/middleware"
	"github.com/contractgateway/gateway/repair"
)

// Bounds of the stats' memory: latency samples kept for the percentiles,
// and failures listed.
const (
	statsReservoir = 1024
	statsFailures  = 20
)

// Stats counts guarded requests since start for GET /admin/stats and the
// dashboard. Like the metrics it holds no prompt or output; its labels are
// the metrics' (ad-hoc schema contracts count as "schema").
type Stats struct {
	now   func() time.Time
	start time.Time

	models *ModelLabels

	mu         sync.Mutex
	requests   map[statsKey]int // contract, model, status
	violations map[statsKey]int // contract, model, code (before repair), status
	rungs      map[string]int
	cache      map[string]int
	total      int
	firstCalls int
	llmCalls   int
	localFixes int
	saved      int
	tokens     Tokens
	latency    []time.Duration
	seen       int
	rand       *rand.Rand
	failures   []Failure
}

type statsKey struct{ contract, model, code, status string }

type Tokens struct {
	FirstPrompt  int `json:"first_prompt"`
	FirstOutput  int `json:"first_output"`
	RepairPrompt int `json:"repair_prompt"`
	RepairOutput int `json:"repair_output"`
}

// Failure is one recent request that ended failed, in fallback or in an
// upstream error.
type Failure struct {
	RequestID string    `json:"request_id"`
	Time      time.Time `json:"time"`
	Contract  string    `json:"contract"`
	Model     string    `json:"model"`
	Status    string    `json:"status"`
	Codes     []string  `json:"codes"`
	Error     string    `json:"error,omitempty"`
}

func New(now func() time.Time) *Stats {
	if now == nil {
		now = time.Now
	}
	return &Stats{now: now, start: now(), models: NewModelLabels(MaxModels), requests: map[statsKey]int{}, violations: map[statsKey]int{},
		rungs: map[string]int{}, cache: map[string]int{}, rand: rand.New(rand.NewPCG(1, 2))}
}

// AcceptedRung says which rung produced the answer the client got: first
// (the model's answer was valid as written), local, llm_repair,
// regeneration, rerun, fallback:<mode>, cache (a stored or shared answer),
// failed or error.
func AcceptedRung(ev middleware.Event) string {
	switch ev.Status {
	case middleware.StatusError, repair.StatusFailed:
		return ev.Status
	}
	if ev.CacheHit || ev.Coalesced || len(ev.Rungs) == 0 {
		return "cache"
	}
	if ev.Status == repair.StatusValid {
		return "first"
	}
	for i := len(ev.Rungs) - 1; i >= 0; i-- {
		if r := ev.Rungs[i]; r != "merge" {
			return repair.RungKind(r)
		}
	}
	return "local"
}

// observe counts one guarded request (GuardConfig.Observe).
func (s *Stats) Observe(ev middleware.Event) {
	contract, model := s.models.Of(ev)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.total++
	s.requests[statsKey{contract: contract, model: model, status: ev.Status}]++
	for _, c := range ev.CodesBefore {
		s.violations[statsKey{contract: contract, model: model, code: c, status: ev.Status}]++
	}
	s.rungs[AcceptedRung(ev)]++
	if ev.Cache != "" {
		s.cache[ev.Cache]++
	}
	if !ev.CacheHit && !ev.Coalesced {
		s.firstCalls++
	}
	s.llmCalls += ev.LLMCalls
	s.localFixes += ev.LocalFixes
	if ev.Status == repair.StatusRepaired && ev.LLMCalls == 0 && len(ev.Rungs) == 1 && ev.Rungs[0] == "local" {
		s.saved++
	}
	s.tokens.FirstPrompt += ev.FirstTokens.PromptTokens
	s.tokens.FirstOutput += ev.FirstTokens.OutputTokens
	s.tokens.RepairPrompt += ev.RepairTokens.PromptTokens
	s.tokens.RepairOutput += ev.RepairTokens.OutputTokens
	// Reservoir sampling: every latency seen has the same chance to be
	// among the samples, in bounded memory.
	s.seen++
	if len(s.latency) < statsReservoir {
		s.latency = append(s.latency, ev.Latency)
	} else if i := s.rand.IntN(s.seen); i < statsReservoir {
		s.latency[i] = ev.Latency
	}
	switch ev.Status {
	case repair.StatusFailed, repair.StatusFallback, middleware.StatusError:
		codes := ev.CodesAfter
		if codes == nil {
			codes = []string{}
		}
		s.failures = append(s.failures, Failure{RequestID: ev.RequestID, Time: s.now().UTC(), Contract: contract,
			Model: model, Status: ev.Status, Codes: codes, Error: ev.Error})
		if len(s.failures) > statsFailures {
			s.failures = slices.Delete(s.failures, 0, len(s.failures)-statsFailures)
		}
	}
}

// Report is what Stats has counted: the body of GET /admin/stats, which
// the gateway completes with the routes, the API keys and the debug store.
type Report struct {
	// Source says where the counts come from: "outcomes" (the outcome
	// store: every replica's requests over the window Since to Until,
	// surviving restarts) or "process" (this process since its start).
	Source string `json:"source"`
	// Since is the start of what is counted; Until its end, set when the
	// counts come from the outcome store.
	Since time.Time  `json:"since"`
	Until *time.Time `json:"until,omitempty"`
	// StoreError says why the counts are this process's although an
	// outcome store is configured (its database failed to answer).
	StoreError    string         `json:"store_error,omitempty"`
	UptimeSeconds float64        `json:"uptime_seconds"`
	Requests      int            `json:"requests"`
	ByStatus      map[string]int `json:"by_status"`
	// Counts are requests by contract, model and final status.
	Counts []Count `json:"counts"`
	// Violations are the codes found in first answers, by contract, model,
	// code and the request's final status.
	Violations []Count        `json:"violations"`
	ByCode     map[string]int `json:"violations_by_code"`
	ByModel    map[string]int `json:"violations_by_model"`
	Rungs      map[string]int `json:"rungs"`
	LLMCalls   Calls          `json:"llm_calls"`
	LocalFixes int            `json:"local_fixes"`
	Cache      Cache          `json:"cache"`
	Tokens     Tokens         `json:"tokens"`
	Latency    Latency        `json:"latency_ms"`
	Failures   []Failure      `json:"recent_failures"`
}

// Count is one row of counts.
type Count struct {
	Contract string `json:"contract"`
	Model    string `json:"model"`
	Code     string `json:"code,omitempty"`
	Status   string `json:"status"`
	Count    int    `json:"count"`
}

// Calls counts model calls: first answers, the ladder's calls, and
// the calls local repair saved (requests repaired without a model call).
type Calls struct {
	First  int `json:"first"`
	Repair int `json:"repair"`
	Saved  int `json:"saved_by_local_repair"`
}

// Cache counts cache results; HitRate is hits over hits and misses.
type Cache struct {
	Hit     int     `json:"hit"`
	Miss    int     `json:"miss"`
	Bypass  int     `json:"bypass"`
	HitRate float64 `json:"hit_rate"`
}

// Latency are percentiles over a bounded sample, in milliseconds.
type Latency struct {
	Samples int     `json:"samples"`
	P50     float64 `json:"p50"`
	P90     float64 `json:"p90"`
	P99     float64 `json:"p99"`
}

func (s *Stats) Report() Report {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := Report{Source: "process", Since: s.start.UTC(), UptimeSeconds: s.now().Sub(s.start).Seconds(), Requests: s.total,
		ByStatus: map[string]int{}, ByCode: map[string]int{}, ByModel: map[string]int{}, Rungs: map[string]int{},
		LLMCalls:   Calls{First: s.firstCalls, Repair: s.llmCalls, Saved: s.saved},
		LocalFixes: s.localFixes, Tokens: s.tokens, Failures: slices.Clone(s.failures)}
	for k, n := range s.requests {
		r.Counts = append(r.Counts, Count{Contract: k.contract, Model: k.model, Status: k.status, Count: n})
		r.ByStatus[k.status] += n
	}
	for k, n := range s.violations {
		r.Violations = append(r.Violations, Count{Contract: k.contract, Model: k.model, Code: k.code, Status: k.status, Count: n})
		r.ByCode[k.code] += n
		r.ByModel[k.model] += n
	}
	for k, n := range s.rungs {
		r.Rungs[k] = n
	}
	r.Cache = Cache{Hit: s.cache["hit"], Miss: s.cache["miss"], Bypass: s.cache["bypass"]}
	r.Latency = percentiles(s.latency)
	r.Finish()
	return r
}

// Finish puts a report's rows in their order, computes the cache hit
// rate and turns missing lists into empty ones, so that a report built
// elsewhere (from the outcome store) reads like this process's.
func (r *Report) Finish() {
	for _, rows := range [][]Count{r.Counts, r.Violations} {
		slices.SortFunc(rows, func(a, b Count) int {
			return cmp.Or(cmp.Compare(a.Contract, b.Contract), cmp.Compare(a.Model, b.Model),
				cmp.Compare(a.Code, b.Code), cmp.Compare(a.Status, b.Status))
		})
	}
	if r.Counts == nil {
		r.Counts = []Count{}
	}
	if r.Violations == nil {
		r.Violations = []Count{}
	}
	if r.Failures == nil {
		r.Failures = []Failure{}
	}
	if looked := r.Cache.Hit + r.Cache.Miss; looked > 0 {
		r.Cache.HitRate = float64(r.Cache.Hit) / float64(looked)
	}
}

// percentiles by nearest rank.
func percentiles(samples []time.Duration) Latency {
	out := Latency{Samples: len(samples)}
	if len(samples) == 0 {
		return out
	}
	sorted := slices.Clone(samples)
	slices.Sort(sorted)
	at := func(p int) float64 {
		i := (p*len(sorted)+99)/100 - 1
		return float64(sorted[max(i, 0)].Microseconds()) / 1000
	}
	out.P50, out.P90, out.P99 = at(50), at(90), at(99)
	return out
}
