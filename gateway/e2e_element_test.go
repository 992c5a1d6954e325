//go:build unix

package gateway

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/contractgateway/gateway/config"
	"github.com/contractgateway/gateway/repair"
)

// crewDir is the user contract directory of the guarded stream tests; its
// crew contract has the item array /elements that the Vercel AI SDK's
// array output asks for.
func crewDir(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("testdata", "e2e", "stream-contracts"))
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// newPacedElements is a paced upstream whose answer is the document
// {"elements": items} as a model would write it, indented, holding before
// each item from the third on until the test closes its gate (gates[k]
// opens item k+2). The Vercel AI SDK yields an element of elementStream
// once the next one has begun, so a client that reports element k while
// item k+2 is held got it before the model wrote further: the gates step
// the model and the client in turn, one element at a time. repair, when
// not empty, answers the item-scoped repair call.
func newPacedElements(items []string, repair string) *pacedQuiz {
	var b strings.Builder
	b.WriteString("{\n  \"elements\": [\n    ")
	var holds []int
	var gates []chan struct{}
	for k, it := range items {
		if k > 0 {
			b.WriteString(",\n    ")
		}
		if k >= 2 {
			holds = append(holds, b.Len())
			gates = append(gates, make(chan struct{}))
		}
		b.WriteString(it)
	}
	b.WriteString("\n  ]\n}\n")
	return &pacedQuiz{text: b.String(), holds: holds, gates: gates, repair: repair, pace: time.Millisecond, piece: 8}
}

// elementCase is one run of the Vercel AI SDK's elementStream through a
// guarded progressive stream of the crew contract.
type elementCase struct {
	name string
	// items are what the model writes, repair its answer to a repair call
	// ("" for none expected).
	items  []string
	repair string
	// want are the elements the client must get, in order.
	want []string
	// repairOf is the item the one repair call asks for, -1 for none.
	repairOf int
	// direct points the client at the upstream itself, without the
	// gateway: what the client does straight from a model.
	direct bool
}

// crewMembers are six members of the crew contract, each valid.
var crewMembers = []string{
	`{"name": "Ada", "age": 36}`,
	`{"name": "Grace", "age": 45}`,
	`{"name": "Alan", "age": 41}`,
	`{"name": "Edsger", "age": 72}`,
	`{"name": "Barbara", "age": 29}`,
	`{"name": "Ken", "age": 50}`,
}

// elementRun is what runElementStream saw: the elements elementStream
// yielded in order (the first len(want)-2 of them in step with the
// upstream), the client's result line, and the upstream.
type elementRun struct {
	got []any
	res streamClientResult
	up  *pacedQuiz
}

// runElementStream runs stream.mjs ai_element_stream (streamObject with
// output 'array', unchanged) through a guarded progressive stream of the
// crew contract, whose item array is the /elements the SDK asks for. The
// paced upstream holds each item from the third on until the client has
// reported the element two before it, so the run gets past the steps only
// if elementStream yields the elements one at a time while the model is
// still writing: element k while item k+2 is unwritten, the first one
// before the last item. It fails the test when the client reports nothing
// while the upstream holds, or fails.
func runElementStream(t *testing.T, tc elementCase) elementRun {
	t.Helper()
	node, dir := nodeClientsDir(t)
	contracts := crewDir(t)
	up := newPacedElements(tc.items, tc.repair)
	gw := startPaced(t, up)
	if !tc.direct {
		cfg := config.Default()
		cfg.Listen = "127.0.0.1:0"
		cfg.Upstream = gw
		cfg.ContractsDir = contracts
		cfg.Routes = []config.Route{{Model: "crew", Upstream: "m", Contract: "crew"}}
		gw = startE2EGateway(t, cfg)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	ns := startNodeStream(t, ctx, node, dir, "ai_element_stream",
		"CG_GATEWAY_URL="+gw, "CG_GUARDED_MODEL=crew", "CG_SCHEMA="+filepath.Join(contracts, "crew", "schema.json"))
	run := elementRun{up: up}
	for k := range len(tc.items) - 2 {
		// Items k+2 and on are held: element k must come first.
		line, ok := ns.next(ctx)
		if !ok {
			cancel()
			_, _ = ns.rest()
			t.Fatalf("elementStream yielded %d elements while the upstream held item %d of %d, want element %d (stderr: %s)",
				k, k+2, len(tc.items), k, ns.stderr.String())
		}
		run.got = append(run.got, elementLine(t, line))
		close(up.gates[k])
	}
	more, err := ns.rest()
	if err != nil {
		t.Fatalf("node stream.mjs ai_element_stream: %v\nstderr: %s", err, ns.stderr.String())
	}
	if len(more) == 0 {
		t.Fatalf("no result line after %d elements (stderr: %s)", len(run.got), ns.stderr.String())
	}
	for _, l := range more[:len(more)-1] {
		run.got = append(run.got, elementLine(t, l))
	}
	if err := json.Unmarshal([]byte(more[len(more)-1]), &run.res); err != nil {
		t.Fatalf("last line %q: %v", more[len(more)-1], err)
	}
	if run.res.Error != "" {
		t.Fatalf("ai_element_stream failed: %s", run.res.Error)
	}
	return run
}

// TestE2EStreamElementStream runs the Vercel AI SDK's elementStream
// through a guarded progressive stream (runElementStream): the elements
// come one at a time while the model writes, in order, each the element
// of the final object at its place, and a broken item — fixed locally, or
// by the item-scoped repair call the upstream answers — reaches
// elementStream as the valid element. Whether the last element is yielded
// too is TestE2EStreamElementStreamLast's.
func TestE2EStreamElementStream(t *testing.T) {
	with := func(k int, item string) []string {
		out := append([]string(nil), crewMembers...)
		out[k] = item
		return out
	}
	tests := []elementCase{
		{name: "valid", items: crewMembers, want: crewMembers, repairOf: -1},
		{
			// A number written as a string: local repair's type fix.
			name: "local fix", items: with(2, `{"name": "Alan", "age": "41"}`), want: crewMembers, repairOf: -1,
		},
		{
			// A name over maxLength has no local fix: one item-scoped call,
			// made while the model holds its next item.
			name:   "repair call",
			items:  with(3, `{"name": "Edsger Wybe Dijkstra", "age": 72}`),
			repair: `{"elements[3]": {"name": "Edsger", "age": 72}}`,
			want:   crewMembers, repairOf: 3,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			run := runElementStream(t, tt)
			want := make([]any, len(tt.want))
			for i, s := range tt.want {
				want[i] = decodeJSON(t, s)
			}
			// Every element but the last comes once the next one began:
			// at least len(want)-1 of them, in order.
			if n := len(run.got); n < len(want)-1 || n > len(want) || !reflect.DeepEqual(run.got, want[:n]) {
				t.Errorf("elementStream yielded %v, want %v in this order", run.got, want)
			}
			if final := decodeJSON(t, run.res.Text); !reflect.DeepEqual(final, want) {
				t.Errorf("final object %s, want %v", run.res.Text, want)
			}
			if run.res.Updates != len(run.got) {
				t.Errorf("the client counted %d elements, the test read %d lines", run.res.Updates, len(run.got))
			}
			if p := run.up.seen(); len(p) == 0 || p[0] != "/api/chat" {
				t.Errorf("upstream calls %v, want the first to /api/chat", p)
			}
			calls := run.up.repairCalls()
			switch {
			case tt.repairOf < 0 && len(calls) != 0:
				t.Errorf("%d repair calls, want none: %q", len(calls), calls)
			case tt.repairOf >= 0 && len(calls) != 1:
				t.Errorf("%d repair calls, want one for item %d: %q", len(calls), tt.repairOf, calls)
			case tt.repairOf >= 0 && !strings.HasPrefix(calls[0], repair.ScopedInstruction("elements", []int{tt.repairOf})):
				t.Errorf("repair call %q, want it scoped to item %d", calls[0], tt.repairOf)
			}
		})
	}
}

// TestE2EStreamElementStreamLast: elementStream yields every element of
// the final object, the last one included, through the guard as it does
// straight from the model. The SDK shows its last element only when the
// array's close changes what it parsed; the guard sends each item's
// opening as a piece of its own, so that the last item's release leaves
// it incomplete until the rest arrives.
func TestE2EStreamElementStreamLast(t *testing.T) {
	want := make([]any, len(crewMembers))
	for i, s := range crewMembers {
		want[i] = decodeJSON(t, s)
	}
	for _, direct := range []bool{true, false} {
		run := runElementStream(t, elementCase{items: crewMembers, want: crewMembers, repairOf: -1, direct: direct})
		if !reflect.DeepEqual(run.got, want) {
			t.Errorf("direct=%v: elementStream yielded %d elements %v, want all %d: %v", direct, len(run.got), run.got, len(want), want)
		}
	}
}

// startPaced serves up for the test and returns its URL.
func startPaced(t *testing.T, up *pacedQuiz) string {
	t.Helper()
	srv := httptest.NewServer(up)
	t.Cleanup(srv.Close)
	return srv.URL
}

// elementLine decodes a line "element <json>" of stream.mjs.
func elementLine(t *testing.T, line string) any {
	t.Helper()
	s, ok := strings.CutPrefix(line, "element ")
	if !ok {
		t.Fatalf("line %q, want an element", line)
	}
	return decodeJSON(t, s)
}

// decodeJSON decodes s with numbers as float64, as JSON.parse reads them.
func decodeJSON(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("%q: %v", s, err)
	}
	return v
}
