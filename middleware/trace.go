package middleware

import (
	"context"
	"net/http"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/contractgateway/gateway/apierr"
	"github.com/contractgateway/gateway/middleware/codec"
	"github.com/contractgateway/gateway/upstream"
)

// tracerName is the instrumentation scope of the guard's spans.
const tracerName = "github.com/contractgateway/gateway/middleware"

// Span attributes of the guard: the GenAI semantic conventions for model
// calls, and the contract's own. No prompt or output text is ever set.
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

// tracer is the guard's tracer; nil when tracing is off.
func (g *guard) tracer() trace.Tracer {
	if g.TracerProvider == nil {
		return nil
	}
	return g.TracerProvider.Tracer(tracerName)
}

// operation is the GenAI operation of a wire API.
func operation(path string) string {
	switch path {
	case "/api/generate", "/v1/completions":
		return "text_completion"
	}
	return "chat"
}

// startRequest starts the span of one guarded request, a child of the
// client's trace when it sent a traceparent.
// It begins when the request did; decoding and resolving, done before the
// request was known to be guarded, become its first two stages.
func (g *guard) startRequest(r *http.Request, cd codec.Codec, start, decoded time.Time) (context.Context, trace.Span) {
	ctx := r.Context()
	t := g.tracer()
	if t == nil {
		return ctx, noopSpan
	}
	ctx = propagator.Extract(ctx, propagation.HeaderCarrier(r.Header))
	ctx, span := t.Start(ctx, "guard "+cd.Path(), trace.WithSpanKind(trace.SpanKindServer), trace.WithTimestamp(start),
		trace.WithAttributes(attrOperation.String(operation(cd.Path())), attribute.String("http.route", cd.Path())))
	if name, ok := ctx.Value(ctxKeyCaller{}).(string); ok && name != "" {
		span.SetAttributes(attrKey.String(name))
	}
	resolved := time.Now()
	_, s := t.Start(ctx, "decode", trace.WithTimestamp(start))
	s.End(trace.WithTimestamp(decoded))
	_, s = t.Start(ctx, "resolve", trace.WithTimestamp(decoded))
	s.End(trace.WithTimestamp(resolved))
	return ctx, span
}

// ctxKeyCaller carries the name of the API key a request came with.
type ctxKeyCaller struct{}

// WithCaller returns ctx carrying name, the name of the API key the
// request came with (never its secret), which the guard's span records
// as gateway.key.name: an access check in front of the guard calls it.
func WithCaller(ctx context.Context, name string) context.Context {
	return context.WithValue(ctx, ctxKeyCaller{}, name)
}

// noopSpan stands for the request's span when tracing is off.
var noopSpan = noop.Span{}

// endRequest sets what the request became and ends its span.
func endRequest(span trace.Span, ev Event) {
	if !span.IsRecording() {
		return
	}
	span.SetAttributes(attrRoute.String(ev.Route), attrContract.String(ev.Contract), attrRequestModel.String(ev.Model),
		attrStatus.String(ev.Status), attrCodesBefore.StringSlice(ev.CodesBefore), attrCodesAfter.StringSlice(ev.CodesAfter),
		attrRungs.StringSlice(ev.Rungs), attrLLMCalls.Int(ev.LLMCalls), attrLocalFixes.Int(ev.LocalFixes), attrCache.String(ev.Cache),
		attrInputTokens.Int(ev.FirstTokens.PromptTokens+ev.RepairTokens.PromptTokens),
		attrOutputTokens.Int(ev.FirstTokens.OutputTokens+ev.RepairTokens.OutputTokens))
	if ev.Status == StatusError {
		span.SetStatus(codes.Error, ev.Error)
	}
	span.End()
}

// stage starts the span of one stage of the pipeline; end ends it.
func (g *guard) stage(ctx context.Context, name string) (context.Context, func()) {
	t := g.tracer()
	if t == nil || !trace.SpanFromContext(ctx).SpanContext().IsValid() {
		return ctx, func() {}
	}
	ctx, span := t.Start(ctx, name)
	return ctx, func() { span.End() }
}

// modelCall starts the span of one model call (GenAI conventions: named
// "{operation} {model}", a client span); done records its tokens and error.
func (g *guard) modelCall(ctx context.Context, op, model, phase string) (context.Context, func(prompt, output int, err error)) {
	t := g.tracer()
	if t == nil {
		return ctx, func(int, int, error) {}
	}
	ctx, span := t.Start(ctx, op+" "+model, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(attrOperation.String(op), attrRequestModel.String(model), attrSystem.String("ollama"), attrPhase.String(phase)))
	return ctx, func(prompt, output int, err error) {
		if err != nil {
			span.SetStatus(codes.Error, errorCause(err))
		} else {
			span.SetAttributes(attrInputTokens.Int(prompt), attrOutputTokens.Int(output))
		}
		if up := upstream.Served(ctx); up != "" {
			span.SetAttributes(attrUpstream.String(up)) // the Ollama that answered
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

// inject writes the trace context of ctx into an upstream call's header.
func (g *guard) inject(ctx context.Context, h http.Header) {
	if g.TracerProvider != nil {
		propagator.Inject(ctx, propagation.HeaderCarrier(h))
	}
}
