// Package middleware is the embeddable part of Contract Gateway: an echo
// middleware that guards the answers of Ollama's text APIs (generate,
// chat, and the OpenAI- and Anthropic-compatible chat completions,
// completions, Responses and Messages). Mounted in front of a
// handler that passes every other request on — a reverse proxy, usually —
// it asks Ollama itself through its [Upstream], validates the model's
// answer against a contract, repairs it, and answers in the client's own
// shape, or with 422 and the violation report.
package middleware

import (
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	echomw "github.com/labstack/echo/v4/middleware"
	"go.opentelemetry.io/otel/trace"

	"github.com/contractgateway/gateway/middleware/codec"
	"github.com/contractgateway/gateway/middleware/codec/apis"
	"github.com/contractgateway/gateway/middleware/modelcall"
	"github.com/contractgateway/gateway/middleware/route"
	"github.com/contractgateway/gateway/middleware/spans"
	"github.com/contractgateway/gateway/middleware/upstream"
	"github.com/contractgateway/gateway/repair"
)

// Defaults of GuardConfig; each is the value of a zero field.
const (
	DefaultMaxBodyBytes     = 32 << 20
	DefaultMaxResponseBytes = 64 << 20
	DefaultDeadline         = 120 * time.Second
	DefaultMaxLLMCalls      = repair.DefaultMaxLLMCalls
	DefaultStreamKeepAlive  = 10 * time.Second
)

// Upstream is the guard's one road to Ollama: the first answer, repair
// calls, partial regeneration, re-runs and the fallback model all go
// through it: an [upstream.Client] or a pool of them (gateway/pool), the pass-through's
// own, so that both share one view of the upstreams' health. A call's
// model is on its context (upstream.WithModel), for a pool to route it.
type Upstream interface {
	// Do sends req to Ollama and returns its answer. req.URL holds the path
	// only: the Upstream knows where Ollama is. An error the client should
	// see as it is (a 503 of an open breaker, with Retry-After) is an
	// *apierr.Error; the request's context ending is its context's error;
	// any other error is the upstream's failure (a timeout 504, anything
	// else an unreachable upstream, 502), as upstream.Send maps it.
	Do(req *http.Request) (*http.Response, error)
}

var _ Upstream = (*upstream.Client)(nil)

// Resolver decides whether a request is guarded. A nil route.Route means pass
// the request through; an error is the client's (400).
type Resolver interface {
	Resolve(route.Lookup) (*route.Route, error)
}

var _ Resolver = (*route.Routes)(nil)

// GuardConfig configures the guard. The zero value of every field but
// Resolver and Upstream means its documented default; a negative limit
// means none.
type GuardConfig struct {
	// Skipper skips the guard for a request (echo's convention).
	Skipper echomw.Skipper
	// Resolver decides whether a request is guarded and by which contract.
	// Required.
	Resolver Resolver
	// Upstream is the road to Ollama for every call the guard makes.
	// Required.
	Upstream Upstream
	// Codecs are the wire APIs guarded, one per path; nil means
	// [apis.All]().
	Codecs []codec.Codec
	// Cache keeps validated outputs and shares identical concurrent
	// requests; nil means none.
	Cache *Cache
	// RepairGate is the repair breaker (per route and upstream model): it
	// says whether the ladder may go past local repair, and done records
	// whether the request ended without fallback. nil: always allowed.
	RepairGate func(route, model string) (allow bool, done func(success bool))
	// MaxBodyBytes bounds a guarded request body, in bytes; larger bodies
	// get 413. Zero means DefaultMaxBodyBytes (32 MiB), negative no limit.
	MaxBodyBytes int64
	// MaxResponseBytes bounds an upstream answer the guard reads, in bytes;
	// larger answers get 502. Zero means DefaultMaxResponseBytes (64 MiB),
	// negative no limit.
	MaxResponseBytes int64
	// Deadline bounds all upstream work for one guarded request, re-runs and
	// repair calls included. Zero means DefaultDeadline (120 s), negative
	// none.
	Deadline time.Duration
	// StreamKeepAlive is the interval of the keep-alives a client that
	// asked for a stream gets while the guard holds its answer: the API's
	// own harmless event (see codec.Codec's KeepAlive). The stream starts
	// — status 200, headers — with the first one, so an answer ready
	// sooner keeps its status and headers; once it started, the
	// X-Contract-* and X-Cache headers come as trailers, and an error as
	// the stream's final event. Zero means DefaultStreamKeepAlive (10 s),
	// negative none.
	StreamKeepAlive time.Duration
	// MaxLLMCalls bounds the ladder's model calls per request. Zero means
	// DefaultMaxLLMCalls (6), negative none (local repair only).
	MaxLLMCalls int
	// ToolCalls guards the tool calls of requests no contract guards: when
	// such a request declares tools and the answer calls them, each call's
	// arguments are validated against its function's parameters schema and
	// repaired, or the client gets 422. False (the default) passes those
	// requests through untouched. Guarded requests always get their tool
	// calls checked.
	ToolCalls bool
	// Logger receives one line per guarded request; nil means slog.Default.
	Logger *slog.Logger
	// Observe, when set, is called once per guarded request (metrics).
	Observe func(Event)
	// TracerProvider, when set, traces every guarded request: a span per
	// request, its stages and its model calls (GenAI attributes, never
	// prompt or output text), and a W3C traceparent on each upstream call.
	// Nil means no tracing.
	TracerProvider trace.TracerProvider
	// Record, when set, is called once per guarded request whose answer
	// went through the ladder, with its first and final texts (the debug
	// store). It is not called for cache hits and coalesced requests.
	Record func(Record)

	// newStreamWriter makes the writer of a progressive stream, item by
	// item in the client's stream format: the codec's own, or a test's.
	newStreamWriter func(cd codec.Codec, w http.ResponseWriter, r *codec.Request) codec.StreamWriter
}

// DefaultGuardConfig holds the defaults; a Resolver and an Upstream must
// still be set.
var DefaultGuardConfig = GuardConfig{
	Skipper:          echomw.DefaultSkipper,
	MaxBodyBytes:     DefaultMaxBodyBytes,
	MaxResponseBytes: DefaultMaxResponseBytes,
	Deadline:         DefaultDeadline,
	StreamKeepAlive:  DefaultStreamKeepAlive,
	MaxLLMCalls:      DefaultMaxLLMCalls,
}

// StatusError is the Event status of a guarded request that ended before
// validation: the upstream failed, or its answer was unreadable or too
// large. The other statuses are repair's (valid, repaired, fallback,
// failed).
const StatusError = "error"

// Event describes one guarded request for its log line and metrics: what
// was asked of which contract and model, how it ended, which rungs ran and
// what they cost. It carries no prompt or output: those may be personal
// data.
type Event struct {
	RequestID   string
	Route       string
	Contract    string
	Model       string // the upstream model, as route.ModelName writes it
	Upstream    string // the URL of the Ollama that answered the last model call
	Status      string
	Rungs       []string
	LLMCalls    int
	LocalFixes  int
	CodesBefore []string
	CodesAfter  []string
	ParseError  string
	Latency     time.Duration
	// Cache is "hit", "miss" or "bypass"; CacheHit is Cache == "hit".
	Cache    string
	CacheHit bool
	// Coalesced is set when the answer was shared with an identical request
	// in flight: this request made no upstream call of its own.
	Coalesced bool
	// RepairTokens are the tokens the ladder's model calls cost.
	RepairTokens repair.Usage
	// FirstTokens are the tokens of the first answer (zero for a cache hit
	// or a coalesced request: no call of its own).
	FirstTokens repair.Usage
	// Error is the cause of a StatusError, for the log.
	Error string
	// Key is the name of the API key the request came with (WithCaller).
	Key string
}

// ToMiddleware checks the config and returns the middleware. The
// middleware returns its errors, a guarded stream's failure after its
// first item included: the echo instance must have ErrorHandler as its
// HTTPErrorHandler, which writes them in the request's API shape and ends
// a started stream with the API's error frame (echo's own handler writes
// nothing once a response is under way).
func (config GuardConfig) ToMiddleware() (echo.MiddlewareFunc, error) {
	if config.Resolver == nil {
		return nil, errors.New("guard: Resolver is required")
	}
	if config.Upstream == nil {
		return nil, errors.New("guard: Upstream is required")
	}
	if config.Skipper == nil {
		config.Skipper = DefaultGuardConfig.Skipper
	}
	if config.MaxBodyBytes == 0 {
		config.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if config.MaxResponseBytes == 0 {
		config.MaxResponseBytes = DefaultMaxResponseBytes
	}
	if config.Deadline == 0 {
		config.Deadline = DefaultDeadline
	}
	if config.MaxLLMCalls == 0 {
		config.MaxLLMCalls = DefaultMaxLLMCalls
	}
	if config.newStreamWriter == nil {
		config.newStreamWriter = func(cd codec.Codec, w http.ResponseWriter, r *codec.Request) codec.StreamWriter {
			return cd.NewStreamWriter(w, r)
		}
	}
	if config.StreamKeepAlive == 0 {
		config.StreamKeepAlive = DefaultStreamKeepAlive
	}
	if config.Logger == nil {
		config.Logger = slog.Default()
	}
	if config.Codecs == nil {
		config.Codecs = apis.All()
	}
	byPath := map[string]codec.Codec{}
	for _, cd := range config.Codecs {
		if _, dup := byPath[cd.Path()]; dup {
			return nil, errors.New("guard: two codecs for " + cd.Path())
		}
		byPath[cd.Path()] = cd
	}
	g := &guard{GuardConfig: config, tools: newToolValidators(), spans: spans.New(config.TracerProvider, upstream.Served)}
	g.caller = &modelcall.Caller{Upstream: config.Upstream, MaxResponseBytes: config.MaxResponseBytes, Inject: g.spans.Inject}
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			if config.Skipper(c) || c.Request().Method != http.MethodPost {
				return next(c)
			}
			cd, ok := byPath[strings.TrimSuffix(c.Request().URL.Path, "/")]
			if !ok {
				return next(c)
			}
			return g.serve(c, next, cd)
		}
	}, nil
}

type guard struct {
	GuardConfig
	tools  *toolValidators
	spans  spans.Tracer
	caller *modelcall.Caller
}

func (g *guard) log(ev Event) {
	attrs := []any{
		"request_id", ev.RequestID, "route", ev.Route, "contract", ev.Contract, "model", ev.Model, "upstream", ev.Upstream,
		"status", ev.Status, "rungs", ev.Rungs, "llm_calls", ev.LLMCalls, "local_fixes", ev.LocalFixes,
		"violations_before", ev.CodesBefore, "violations_after", ev.CodesAfter, "parse_error", ev.ParseError,
		"latency_ms", float64(ev.Latency.Microseconds()) / 1000, "cache", ev.Cache, "cache_hit", ev.CacheHit,
		"coalesced", ev.Coalesced,
		"repair_prompt_tokens", ev.RepairTokens.PromptTokens, "repair_output_tokens", ev.RepairTokens.OutputTokens,
		"prompt_tokens", ev.FirstTokens.PromptTokens, "output_tokens", ev.FirstTokens.OutputTokens,
	}
	if ev.Error != "" {
		attrs = append(attrs, "error", ev.Error)
	}
	g.Logger.Info("guarded request", attrs...)
	if g.Observe != nil {
		g.Observe(ev)
	}
}
