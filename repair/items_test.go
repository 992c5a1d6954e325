package repair

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/contractgateway/gateway/contracts"
	"github.com/contractgateway/gateway/internal/mcqgen"
	"github.com/contractgateway/gateway/validators/packs"
	"github.com/contractgateway/gateway/validators/strictjson"
)

// replyModel answers every call with its reply, or its error, and
// records the temperature of the last.
type replyModel struct {
	reply string
	err   error
	calls int
	temp  float64
}

func (m *replyModel) Complete(_ context.Context, req ModelRequest) (Reply, error) {
	m.calls++
	m.temp = req.Temperature
	return Reply{Text: m.reply}, m.err
}

func TestRepairItems(t *testing.T) {
	v, err := packs.Builtin("mcq")
	if err != nil {
		t.Fatal(err)
	}
	params, _ := v.Params(nil)
	good, _ := strictjson.ParseString(mcqgen.Questions(2))
	fixed := string(strictjson.Marshal(good.Get("questions").Items[1]))
	noSchedule := contractFor(t, "mcq", func(c *contracts.Contract) { c.Policy.Temperatures = nil })
	tests := []struct {
		name      string
		model     *replyModel
		localOnly bool
		// again asks again after a call that fixed nothing; noSchedule
		// uses a contract without a re-run schedule.
		again, noSchedule bool
		wantStatus        string
		wantCalls         int
		wantTemp          float64
		wantFixed         bool
	}{
		{name: "scoped reply spliced in", model: &replyModel{reply: `{"questions[1]":` + fixed + `}`}, wantStatus: StatusRepaired, wantCalls: 1, wantFixed: true},
		{name: "unusable reply", model: &replyModel{reply: `sorry`}, wantStatus: StatusFailed, wantCalls: 1},
		{name: "failed call", model: &replyModel{err: errors.New("500")}, wantStatus: StatusFailed, wantCalls: 1},
		{name: "local only makes no call", model: &replyModel{}, localOnly: true, wantStatus: StatusFailed},
		{name: "asked again at the schedule's first temperature", model: &replyModel{reply: `{"questions[1]":` + fixed + `}`}, again: true, wantStatus: StatusRepaired, wantCalls: 1, wantTemp: 0.3, wantFixed: true},
		{name: "not asked again without a schedule", model: &replyModel{reply: `{"questions[1]":` + fixed + `}`}, again: true, noSchedule: true, wantStatus: StatusFailed},
	}
	for _, tt := range tests {
		doc := good.Clone()
		doc.Delete("meta")
		doc.Get("questions").Items[1].Set("answer", strictjson.Int(9))
		_, report := v.CheckDoc(doc, params)
		job := Job{Validator: v, Params: params, Model: tt.model, LocalOnly: tt.localOnly}
		if tt.noSchedule {
			job.Validator = noSchedule
		}
		out := RepairItems(context.Background(), job, doc, report, []int{1}, tt.again)
		if out.Status != tt.wantStatus || tt.model.calls != tt.wantCalls || out.LLMCalls != tt.wantCalls {
			t.Errorf("%s: status %s after %d calls (%d counted), want %s after %d", tt.name, out.Status, tt.model.calls, out.LLMCalls, tt.wantStatus, tt.wantCalls)
		}
		if tt.model.temp != tt.wantTemp {
			t.Errorf("%s: asked at temperature %v, want %v", tt.name, tt.model.temp, tt.wantTemp)
		}
		got := string(strictjson.Marshal(out.Doc.Get("questions").Items[1]))
		if (got == fixed) != tt.wantFixed {
			t.Errorf("%s: item 1 is %s, fixed %v", tt.name, got, tt.wantFixed)
		}
		if first := string(strictjson.Marshal(out.Doc.Get("questions").Items[0])); first != string(strictjson.Marshal(good.Get("questions").Items[0])) {
			t.Errorf("%s: item 0 changed: %s", tt.name, first)
		}
	}
}

// TestAddCalls: the calls, tokens and rungs of several runs add up, each
// rung named once, in the order first used.
func TestAddCalls(t *testing.T) {
	o := Outcome{LLMCalls: 1, Tokens: Usage{PromptTokens: 10, OutputTokens: 3}, Rungs: []string{"local", "llm_repair_scoped"}}
	o.AddCalls(Outcome{LLMCalls: 2, Tokens: Usage{PromptTokens: 5, OutputTokens: 4}, Rungs: []string{"local", "llm_repair_scoped", "partial_regeneration"}})
	want := Outcome{LLMCalls: 3, Tokens: Usage{PromptTokens: 15, OutputTokens: 7}, Rungs: []string{"local", "llm_repair_scoped", "partial_regeneration"}}
	if o.LLMCalls != want.LLMCalls || o.Tokens != want.Tokens || !slices.Equal(o.Rungs, want.Rungs) {
		t.Errorf("AddCalls = %d calls, %+v, %v; want %d, %+v, %v", o.LLMCalls, o.Tokens, o.Rungs, want.LLMCalls, want.Tokens, want.Rungs)
	}
}

// TestRungKind: both repair calls are llm_repair, every re-run is rerun,
// and any other rung is its own kind.
func TestRungKind(t *testing.T) {
	for rung, want := range map[string]string{
		"llm_repair": "llm_repair", "llm_repair_scoped": "llm_repair", "partial_regeneration": "regeneration",
		"rerun:0.3": "rerun", "local": "local", "merge": "merge", "fallback:model": "fallback:model",
	} {
		if got := RungKind(rung); got != want {
			t.Errorf("RungKind(%q) = %q, want %q", rung, got, want)
		}
	}
}
