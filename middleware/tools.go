package middleware

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sync"

	"github.com/contractgateway/gateway/contracts"
	"github.com/contractgateway/gateway/middleware/apierr"
	"github.com/contractgateway/gateway/middleware/codec"
	"github.com/contractgateway/gateway/middleware/route"
	"github.com/contractgateway/gateway/repair"
	"github.com/contractgateway/gateway/validators"
	"github.com/contractgateway/gateway/validators/strictjson"
)

// CodeToolUnknown is the violation of a call of a function the request
// did not declare.
const CodeToolUnknown = "TOOL_UNKNOWN"

// RouteTools is the route.Route name of requests guarded for their tool calls
// only (GuardConfig.ToolCalls).
const RouteTools = "tools"

// toolValidators holds the compiled parameters schemas by hash: clients
// send the same tools with every request.
type toolValidators struct {
	cache *route.SchemaCache
}

func newToolValidators() *toolValidators {
	return &toolValidators{cache: route.NewSchemaCache(route.DefaultSchemaCacheBytes)}
}

// get compiles a parameters schema once. A failed call's arguments are a
// contract failure: no fallback.
func (tv *toolValidators) get(schema json.RawMessage) (*validators.Validator, error) {
	return tv.cache.Get(schema, func(raw []byte) (*validators.Validator, error) {
		c, err := contracts.FromSchema(raw)
		if err != nil {
			return nil, err
		}
		c.Name = "tool"
		c.Shape = contracts.Shape{Expect: "object"}
		c.Fallback = contracts.Fallback{Mode: contracts.FallbackError}
		return validators.New(c, nil)
	})
}

// toolCalls returns the answer's calls when the request declares tools
// and the guard checks them.
func (g *guard) toolCalls(x *exchange, a *codec.Answer) (codec.ToolCodec, []codec.ToolCall) {
	tc, ok := x.codec.(codec.ToolCodec)
	if !ok || len(tc.Tools(x.client)) == 0 {
		return nil, nil
	}
	return tc, tc.ToolCalls(a.Obj)
}

// runTools validates and repairs the arguments of an answer's tool calls:
// the answer is the model's request to call functions, so the contract
// applies to the answer that follows the calls, not to this one.
func (g *guard) runTools(ctx context.Context, x *exchange, first *codec.Answer, tc codec.ToolCodec, calls []codec.ToolCall) *result {
	tools := tc.Tools(x.client)
	contract := RouteTools
	if x.route.Validator != nil && !x.route.ToolsOnly {
		contract = x.route.Validator.Contract.ID()
	}
	res := &result{contract: contract, status: repair.StatusValid, text: first.Text}
	rp := g.startRepairs(x)
	defer func() { res.tools = &rp.spent }()
	args := make([]*strictjson.Value, len(calls))
	for i, call := range calls {
		schema, ok := tools[call.Name]
		if !ok {
			rp.done(true) // the model's mistake, not a failed repair
			res.status, res.report = repair.StatusFailed, unknownTool(call.Name, tools)
			return res
		}
		v, err := g.tools.get(schema)
		if err != nil {
			rp.done(true)
			return &result{err: &apierr.Error{Code: http.StatusBadRequest,
				Msg: fmt.Sprintf("tools: the parameters of %q are not a valid JSON Schema: %v", call.Name, err), Err: err}}
		}
		out := rp.run(ctx, repair.Job{
			Validator: v,
			Params:    validators.Params{},
			Text:      call.Args,
			Prompt:    x.taskPrompt() + "\n\nArguments of a call of the function " + call.Name + ".",
			Model:     g.model(x),
			ModelName: x.upstreamModel,
		})
		if ctx.Err() != nil {
			rp.done(true)
			return &result{err: apierr.From(ctx.Err())}
		}
		res.repairs = rp.spent.LLMCalls + len(rp.spent.Changes)
		if out.Status != repair.StatusValid && out.Status != repair.StatusRepaired || out.Doc == nil {
			rp.done(false)
			rep := out.Report
			rep.Contract = "tool:" + call.Name
			rp.spent.Report = rep
			res.status, res.report = repair.StatusFailed, &rep
			return res
		}
		if out.Status == repair.StatusRepaired {
			res.status = repair.StatusRepaired
			args[i] = out.Doc
		}
	}
	rp.done(true)
	res.obj = tc.WithToolArgs(first.Obj, args)
	// The runs' outcome is the answer's: its summary is a contract
	// summary, which says after the status how many calls were checked.
	rp.spent.Status, rp.spent.Report = res.status, validators.Report{Contract: contract, Valid: true}
	sum := rp.spent.Summary()
	sum.Members = slices.Insert(sum.Members, 2, codec.Member("tool_calls", strictjson.Int(int64(len(calls)))))
	res.obj.Set("contract", sum)
	return res
}

// unknownTool is the report of a call of an undeclared function.
func unknownTool(name string, tools map[string]json.RawMessage) *validators.Report {
	known := make([]string, 0, len(tools))
	for k := range tools {
		known = append(known, k)
	}
	return &validators.Report{
		Contract: "tool:" + name,
		Violations: []validators.Violation{{
			Class: validators.ClassSchema, Code: CodeToolUnknown, Severity: validators.SeverityError,
			Path: "name", Pointer: "/name", Expected: known, Actual: name,
			Hint: "call one of the functions the request declares",
		}},
	}
}

// toolsValidator stands for the contract of requests guarded for their
// tool calls only; their text is never validated against it.
var toolsValidator = sync.OnceValue(func() *validators.Validator {
	c, err := contracts.FromSchema([]byte(`{"type":"object"}`))
	if err != nil {
		panic(err)
	}
	c.Name, c.Version = RouteTools, "1"
	v, err := validators.New(c, nil)
	if err != nil {
		panic(err)
	}
	return v
})

// toolsRoute is the route of a request no contract guards when the guard
// checks tool calls and the request declares tools; nil otherwise.
func (g *guard) toolsRoute(x *exchange) *route.Route {
	if !g.ToolCalls {
		return nil
	}
	tc, ok := x.codec.(codec.ToolCodec)
	if !ok || len(tc.Tools(x.client)) == 0 {
		return nil
	}
	return &route.Route{Name: RouteTools, Validator: toolsValidator(), Params: validators.Params{}, ToolsOnly: true}
}
