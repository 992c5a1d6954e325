package middleware

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/contractgateway/gateway/contracts"
	"github.com/contractgateway/gateway/middleware/route"
	"github.com/contractgateway/gateway/validators"
)

// linesContract writes an item contract with checks to a directory of
// contracts and returns the routes that serve it as "lines": LINE_AMOUNT
// over the item array reads only self (with expected when fixable is
// set; one repair call allowed, max_repairs 1), LINE_OF reads root ("line 1 of 5", true only on the whole
// document) and TOTAL reads the whole document.
func linesContract(t *testing.T, fixable bool) (*route.Routes, *validators.Validator) {
	t.Helper()
	expected := ""
	if fixable {
		expected = `"expected":"self.qty * self.price",`
	}
	dir := filepath.Join(t.TempDir(), "lines")
	files := map[string]string{
		"contract.json": `{"name":"lines","version":"1","schema":"schema.json","item_array":"/items","policy":{"max_repairs":1},"checks":[
 {"code":"LINE_AMOUNT","for_each":"/items","rule":"self.amount == self.qty * self.price","path":"/amount",` + expected + `"message":"amount must be qty × price"},
 {"code":"LINE_OF","for_each":"/items","rule":"self.of == root.items.size()","path":"/of","message":"of is the number of lines"},
 {"code":"TOTAL","rule":"self.total == self.items.map(i, i.amount).sum()","path":"/total","expected":"self.items.map(i, i.amount).sum()","message":"total is the sum of the amounts"}]}`,
		"schema.json": `{"type":"object","required":["items","total"],"properties":{
 "items":{"type":"array","items":{"type":"object","required":["qty","price","amount","of"],"properties":{"qty":{"type":"integer"},"price":{"type":"integer"},"amount":{"type":"integer"},"of":{"type":"integer"}}}},
 "total":{"type":"integer"}}}`,
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	reg, err := contracts.LoadRegistry(filepath.Dir(dir))
	if err != nil {
		t.Fatal(err)
	}
	routes, err := route.NewRoutes(reg, nil, true)
	if err != nil {
		t.Fatal(err)
	}
	c, _ := reg.Lookup("lines")
	v, err := validators.New(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	return routes, v
}

// line is line i of five: qty i+1, price 3, amount as given.
func line(i, amount int) string {
	return `{"qty":` + strconv.Itoa(i+1) + `,"price":3,"amount":` + strconv.Itoa(amount) + `,"of":5}`
}

// TestProgressiveStreamChecks: a guarded stream of an item contract whose
// third item breaks a for_each check that reads only the item is
// repaired in flight — fixed locally through the check's expected, or by
// one item-scoped model call that is told the check's violation — while
// the first two items are already out and later ones wait; the check
// that reads root (false on every prefix of the array) waits for the
// whole document instead of holding the items back.
func TestProgressiveStreamChecks(t *testing.T) {
	tests := []struct {
		name        string
		fixable     bool
		wantTimes   []time.Duration // the distinct times of the text deltas
		wantStatus  string
		wantRepairs int
	}{
		{name: "fixed locally through expected", fixable: true,
			wantTimes: durations(1, 2, 3, 4, 5, 6), wantStatus: "repaired"},
		{name: "repaired by one item-scoped call", fixable: false,
			wantTimes: durations(1, 2, 5, 6), wantStatus: "repaired", wantRepairs: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			routes, v := linesContract(t, tt.fixable)
			synctest.Test(t, func(t *testing.T) {
				// One line a second, the third with a wrong amount; the
				// total is right for the right amounts.
				chunks := []pacedChunk{{time.Second, `{"items":[` + line(0, 3)}}
				total := 3
				for i := 1; i < 5; i++ {
					amount := (i + 1) * 3
					total += amount
					if i == 2 {
						amount = 10
					}
					chunks = append(chunks, pacedChunk{time.Duration(i+1) * time.Second, "," + line(i, amount)})
				}
				chunks = append(chunks, pacedChunk{6 * time.Second, `],"total":` + strconv.Itoa(total) + `}`})
				up := &itemUpstream{chunks: chunks, repair: `{"items[2]":` + line(2, 9) + `}`, repairDelay: 2 * time.Second}
				r := serveStreamOn(t, routes, "lines", up, nil, false, 0)
				at, text := r.texts()
				var times []time.Duration
				for _, a := range at {
					if len(times) == 0 || times[len(times)-1] != a {
						times = append(times, a)
					}
				}
				if len(times) != len(tt.wantTimes) {
					t.Fatalf("text deltas at %v, want at the times %v", at, tt.wantTimes)
				}
				for i := range times {
					if times[i] != tt.wantTimes[i] {
						t.Errorf("text deltas at %v, want at the times %v", at, tt.wantTimes)
						break
					}
				}
				if up.repairs != tt.wantRepairs {
					t.Errorf("%d repair calls, want %d", up.repairs, tt.wantRepairs)
				}
				for _, p := range up.prompts {
					if !strings.Contains(p, "LINE_AMOUNT") {
						t.Errorf("the item-scoped call does not send the check's violation: %.300s", p)
					}
				}
				last := r.events[len(r.events)-1]
				if last.kind != "end" || last.at != 6*time.Second {
					t.Fatalf("stream ends with %s at %v, want end at 6s", last.kind, last.at)
				}
				if len(r.logged) != 1 || r.logged[0].Status != tt.wantStatus {
					t.Fatalf("logged %+v, want one event with status %s", r.logged, tt.wantStatus)
				}
				params, _ := v.Params(nil)
				if rep := v.Validate(text, params).Report; !rep.Valid {
					t.Errorf("the streamed document is invalid: %v\n%s", rep.Codes(), text)
				}
				if !strings.Contains(text, line(2, 9)) {
					t.Errorf("the streamed document lacks the repaired line %s:\n%s", line(2, 9), text)
				}
			})
		})
	}
}

// TestProgressiveStreamBatch: two broken lines that close in the same
// piece of the answer are repaired by one item-scoped call for both, not
// a call each: the contract allows one repair call (max_repairs 1), and
// every call in flight counts against it. The lines go out in order once
// the call is back, with the one that closed while it ran.
func TestProgressiveStreamBatch(t *testing.T) {
	routes, v := linesContract(t, false)
	synctest.Test(t, func(t *testing.T) {
		chunks := []pacedChunk{
			{time.Second, `{"items":[` + line(0, 3)},
			{2 * time.Second, "," + line(1, 6)},
			{3 * time.Second, "," + line(2, 10) + "," + line(3, 11)},
			{4 * time.Second, "," + line(4, 15)},
			{6 * time.Second, `],"total":45}`},
		}
		up := &itemUpstream{chunks: chunks, repair: `{"items[2]":` + line(2, 9) + `,"items[3]":` + line(3, 12) + `}`, repairDelay: 2 * time.Second}
		r := serveStreamOn(t, routes, "lines", up, nil, false, 0)
		at, text := r.texts()
		var times []time.Duration
		for _, a := range at {
			if len(times) == 0 || times[len(times)-1] != a {
				times = append(times, a)
			}
		}
		if want := durations(1, 2, 5, 6); !slices.Equal(times, want) {
			t.Errorf("text deltas at %v, want at the times %v", at, want)
		}
		if up.repairs != 1 || len(r.logged) != 1 || r.logged[0].LLMCalls != 1 {
			t.Errorf("%d repair calls, logged %+v; want one call", up.repairs, r.logged)
		}
		if len(up.prompts) == 0 || !strings.Contains(up.prompts[0], `items[2]`) || !strings.Contains(up.prompts[0], `items[3]`) {
			t.Errorf("the first call does not ask for both lines: %.300q", up.prompts)
		}
		params, _ := v.Params(nil)
		if rep := v.Validate(text, params).Report; !rep.Valid {
			t.Errorf("the streamed document is invalid: %v\n%s", rep.Codes(), text)
		}
	})
}
