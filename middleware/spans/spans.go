// Package spans is the guard's tracing: a span per guarded request, a
// child span per stage of its pipeline and per model call, with the
// GenAI semantic conventions' attributes and the contract's own, and the
// W3C trace context on every upstream call. No prompt or output text is
// ever set: those may be personal data.
//
// It is a package of its own so that the guard says only where a span
// begins and ends; what a span carries and how it is named is here.
package spans

import (
	"context"
	"net/http"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/contractgateway/gateway/middleware/apierr"
)

// tracerName is the instrumentation scope of the guard's spans.
const tracerName = "github.com/contractgateway/gateway/middleware"

// Span attributes of the guard: the GenAI semantic conventions for model
// calls, and the contract's own.
var (
	attrOperation    = attribute.Key("gen_ai.operation.name")
	attrRequestModel = attribute.Key("gen_ai.request.model")
	attrInputTokens  = attribute.Key("gen_ai.usage.input_tokens")
	attrOutputTokens = attribute.Key("gen_ai.usage.output_tokens")
	attrSystem       = attribute.Key("gen_ai.system")
	attrContract     = attribute.Key("contract.id")
	attrRoute        = attribute.Key("contract.route")
	attrStatus       = attribute.Key("contract.status")
	attrCodesBefore  = attribute.Key("contract.violations_before")
	attrCodesAfter   = attribute.Key("contract.violations_after")
	attrRungs        = attribute.Key("contract.rungs")
	attrLLMCalls     = attribute.Key("contract.llm_calls")
	attrLocalFixes   = attribute.Key("contract.local_fixes")
	attrCache        = attribute.Key("contract.cache")
	attrPhase        = attribute.Key("contract.phase")
	attrKey          = attribute.Key("gateway.key.name")
	attrUpstream     = attribute.Key("gateway.upstream")
)

// propagator carries W3C trace context: read from the client, written on
// every upstream call.
var propagator = propagation.TraceContext{}

// noopSpan stands for the request's span when tracing is off.
var noopSpan = noop.Span{}

// Tracer starts the guard's spans. Its zero value traces nothing, at the
// cost of a nil check per span.
type Tracer struct {
	t      trace.Tracer
	served func(context.Context) string
}

// New returns the Tracer of p; a nil p traces nothing. served, when not
// nil, names the upstream that answered the model call of a context (a
// pool's choice), which the call's span records.
func New(p trace.TracerProvider, served func(context.Context) string) Tracer {
	if p == nil {
		return Tracer{}
	}
	return Tracer{t: p.Tracer(tracerName), served: served}
}

// Operation is the GenAI operation of a wire API's path.
func Operation(path string) string {
	switch path {
	case "/api/generate", "/v1/completions":
		return "text_completion"
	}
	return "chat"
}

// StartRequest starts the span of one guarded request at path, a child
// of the client's trace when it sent a traceparent; caller is the name of
// the API key it came with ("" for none). It begins when the request
// did; decoding and resolving, done before the request was known to be
// guarded, become its first two stages.
func (tr Tracer) StartRequest(r *http.Request, path, caller string, start, decoded time.Time) (context.Context, trace.Span) {
	ctx := r.Context()
	t := tr.t
	if t == nil {
		return ctx, noopSpan
	}
	ctx = propagator.Extract(ctx, propagation.HeaderCarrier(r.Header))
	ctx, span := t.Start(ctx, "guard "+path, trace.WithSpanKind(trace.SpanKindServer), trace.WithTimestamp(start),
		trace.WithAttributes(attrOperation.String(Operation(path)), attribute.String("http.route", path)))
	if caller != "" {
		span.SetAttributes(attrKey.String(caller))
	}
	resolved := time.Now()
	_, s := t.Start(ctx, "decode", trace.WithTimestamp(start))
	s.End(trace.WithTimestamp(decoded))
	_, s = t.Start(ctx, "resolve", trace.WithTimestamp(decoded))
	s.End(trace.WithTimestamp(resolved))
	return ctx, span
}

// Outcome is what a guarded request became, as its span records it.
type Outcome struct {
	Route, Contract, Model, Status, Cache string
	CodesBefore, CodesAfter, Rungs        []string
	LLMCalls, LocalFixes                  int
	InputTokens, OutputTokens             int
	// Error, when set, marks the span as failed with this cause.
	Error string
}

// End sets what the request became and ends its span.
func End(span trace.Span, o Outcome) {
	if !span.IsRecording() {
		return
	}
	span.SetAttributes(attrRoute.String(o.Route), attrContract.String(o.Contract), attrRequestModel.String(o.Model),
		attrStatus.String(o.Status), attrCodesBefore.StringSlice(o.CodesBefore), attrCodesAfter.StringSlice(o.CodesAfter),
		attrRungs.StringSlice(o.Rungs), attrLLMCalls.Int(o.LLMCalls), attrLocalFixes.Int(o.LocalFixes), attrCache.String(o.Cache),
		attrInputTokens.Int(o.InputTokens), attrOutputTokens.Int(o.OutputTokens))
	if o.Error != "" {
		span.SetStatus(codes.Error, o.Error)
	}
	span.End()
}

// Stage starts the span of one stage of the pipeline; end ends it. A
// request without a span of its own gets none.
func (tr Tracer) Stage(ctx context.Context, name string) (_ context.Context, end func()) {
	if tr.t == nil || !trace.SpanFromContext(ctx).SpanContext().IsValid() {
		return ctx, func() {}
	}
	ctx, span := tr.t.Start(ctx, name)
	return ctx, func() { span.End() }
}

// ModelCall starts the span of one model call (GenAI conventions: named
// "{operation} {model}", a client span); done records its tokens and error.
func (tr Tracer) ModelCall(ctx context.Context, op, model, phase string) (_ context.Context, done func(prompt, output int, err error)) {
	if tr.t == nil {
		return ctx, func(int, int, error) {}
	}
	ctx, span := tr.t.Start(ctx, op+" "+model, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(attrOperation.String(op), attrRequestModel.String(model), attrSystem.String("ollama"), attrPhase.String(phase)))
	return ctx, func(prompt, output int, err error) {
		if err != nil {
			span.SetStatus(codes.Error, errorCause(err))
		} else {
			span.SetAttributes(attrInputTokens.Int(prompt), attrOutputTokens.Int(output))
		}
		if tr.served != nil {
			if up := tr.served(ctx); up != "" {
				span.SetAttributes(attrUpstream.String(up)) // the Ollama that answered
			}
		}
		span.End()
	}
}

// errorCause is an error as a span says it: the cause the log says.
func errorCause(err error) string {
	if he := apierr.From(err); he != nil {
		return he.Cause()
	}
	return err.Error()
}

// Inject writes the trace context of ctx into an upstream call's header.
func (tr Tracer) Inject(ctx context.Context, h http.Header) {
	if tr.t != nil {
		propagator.Inject(ctx, propagation.HeaderCarrier(h))
	}
}
