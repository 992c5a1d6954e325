package gateway

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/contractgateway/gateway/repair"
)

// OllamaModel is the ladder's repair.Model on a real Ollama: one
// non-streaming /api/generate call per completion, through the given
// transport (the gateway passes its breaker transport, so repair calls and
// pass-through share one view of upstream health).
type OllamaModel struct {
	client *api.Client
	model  string
}

var _ repair.Model = (*OllamaModel)(nil)

// NewOllamaModel returns a model client for base (the upstream URL, never
// OLLAMA_HOST: clients point that at the gateway). A nil transport means
// http.DefaultTransport; timeout bounds one call (0: none beyond ctx).
func NewOllamaModel(base, model string, transport http.RoundTripper, timeout time.Duration) (*OllamaModel, error) {
	u, err := url.Parse(base)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return nil, fmt.Errorf("ollama url %q: want http://host:port", base)
	}
	if transport == nil {
		transport = http.DefaultTransport
	}
	return &OllamaModel{client: api.NewClient(u, &http.Client{Transport: transport, Timeout: timeout}), model: model}, nil
}

// Complete implements repair.Model. The request's model, when set on the
// context by the ladder's caller, wins over the default model.
func (m *OllamaModel) Complete(ctx context.Context, req repair.ModelRequest) (repair.Reply, error) {
	model := m.model
	if req.Model != "" {
		model = req.Model
	}
	stream := false
	opts := map[string]any{"temperature": req.Temperature, "top_p": req.TopP}
	if req.NumPredict > 0 {
		opts["num_predict"] = req.NumPredict
	}
	gr := &api.GenerateRequest{
		Model:   model,
		System:  req.System,
		Prompt:  req.Prompt,
		Stream:  &stream,
		Options: opts,
	}
	if len(req.Format) > 0 {
		gr.Format = req.Format
	}
	var out repair.Reply
	err := m.client.Generate(ctx, gr, func(r api.GenerateResponse) error {
		out.Text += r.Response
		out.PromptTokens += r.PromptEvalCount
		out.OutputTokens += r.EvalCount
		return nil
	})
	if err != nil {
		return repair.Reply{}, fmt.Errorf("ollama generate: %w", err)
	}
	return out, nil
}
