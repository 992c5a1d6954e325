package modelcall

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"

	"github.com/contractgateway/gateway/middleware/codec"
	"github.com/contractgateway/gateway/middleware/codec/ollama"
	"github.com/contractgateway/gateway/middleware/upstream"
	"github.com/contractgateway/gateway/repair"
	"github.com/contractgateway/gateway/validators/strictjson"
)

// maxRepairPrompt bounds one repair or regeneration prompt. A repair
// prompt holds the document to repair: far larger than any document a
// contract describes, it would cost the model more than a re-run.
const maxRepairPrompt = 4 << 20

// errPromptTooLarge is the error of a repair call that was not sent.
var errPromptTooLarge = errors.New("repair prompt too large")

// Model is the ladder's repair.Model on the upstream: one /api/generate
// call per completion, streamed and read as it arrives (stopped once its
// JSON value closed when it carries a format).
type Model struct {
	Caller *Caller
	// Name is the model asked unless a request names its own.
	Name   string
	Header http.Header
	// Span, when set, starts the span of a model call.
	Span func(ctx context.Context, op, model, phase string) (context.Context, func(prompt, output int, err error))
}

var _ repair.StartReporter = Model{}

// ReportsStart implements repair.StartReporter: the call is streamed, and
// its first piece of text says the model answers it.
func (Model) ReportsStart() bool { return true }

// NewModel returns a repair.Model that completes through up with model
// name (the command line's `repair --ollama`).
func NewModel(up upstream.Doer, name string) repair.Model {
	return Model{Caller: &Caller{Upstream: up}, Name: name}
}

// Complete implements repair.Model.
func (m Model) Complete(ctx context.Context, req repair.ModelRequest) (repair.Reply, error) {
	if len(req.System)+len(req.Prompt) > maxRepairPrompt {
		return repair.Reply{}, fmt.Errorf("%w: %d bytes, the limit is %d", errPromptTooLarge, len(req.System)+len(req.Prompt), maxRepairPrompt)
	}
	name := m.Name
	if req.Model != "" {
		name = req.Model
	}
	opts := strictjson.Object(codec.Member("temperature", strictjson.Float(req.Temperature)), codec.Member("top_p", strictjson.Float(req.TopP)))
	if req.NumPredict > 0 {
		opts.Set("num_predict", strictjson.Int(int64(req.NumPredict)))
	}
	body := strictjson.Object(
		codec.Member("model", strictjson.String(name)),
		codec.Member("system", strictjson.String(req.System)),
		codec.Member("prompt", strictjson.String(req.Prompt)),
		codec.Member("stream", strictjson.BoolValue(true)),
		codec.Member("options", opts),
	)
	if len(req.Format) > 0 {
		f, err := strictjson.Parse(req.Format)
		if err != nil {
			return repair.Reply{}, fmt.Errorf("repair format: %w", err)
		}
		body.Set("format", f)
	}
	done := func(int, int, error) {}
	if m.Span != nil {
		ctx, done = m.Span(ctx, "text_completion", name, "repair")
	}
	call := Call{Path: "/api/generate", Body: strictjson.Marshal(body), Header: m.Header, Model: name}
	if req.Started != nil {
		var once sync.Once
		call.OnDelta = func(string) { once.Do(req.Started) }
	}
	a, err := m.Caller.Do(ctx, call, ollama.Generate{}, len(req.Format) > 0)
	if err != nil {
		done(0, 0, err)
		return repair.Reply{}, err
	}
	done(a.PromptTokens, a.OutputTokens, nil)
	return repair.Reply{Text: a.Text, PromptTokens: a.PromptTokens, OutputTokens: a.OutputTokens}, nil
}
