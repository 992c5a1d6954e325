package middleware

import (
	"context"

	"go.opentelemetry.io/otel/trace"

	"github.com/contractgateway/gateway/middleware/spans"
)

// ctxKeyCaller carries the name of the API key a request came with.
type ctxKeyCaller struct{}

// WithCaller returns ctx carrying name, the name of the API key the
// request came with (never its secret), which the guard's span records
// as gateway.key.name and its Event as Key: an access check in front of
// the guard calls it.
func WithCaller(ctx context.Context, name string) context.Context {
	return context.WithValue(ctx, ctxKeyCaller{}, name)
}

// caller is the name WithCaller put in ctx, "" for none.
func caller(ctx context.Context) string {
	name, _ := ctx.Value(ctxKeyCaller{}).(string)
	return name
}

// endRequest sets what the request became and ends its span.
func endRequest(span trace.Span, ev Event) {
	o := spans.Outcome{Route: ev.Route, Contract: ev.Contract, Model: ev.Model, Status: ev.Status, Cache: ev.Cache,
		CodesBefore: ev.CodesBefore, CodesAfter: ev.CodesAfter, Rungs: ev.Rungs, LLMCalls: ev.LLMCalls, LocalFixes: ev.LocalFixes,
		InputTokens:  ev.FirstTokens.PromptTokens + ev.RepairTokens.PromptTokens,
		OutputTokens: ev.FirstTokens.OutputTokens + ev.RepairTokens.OutputTokens}
	if ev.Status == StatusError {
		o.Error = ev.Error
	}
	spans.End(span, o)
}
