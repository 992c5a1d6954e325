package corrections

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/contractgateway/gateway/repair"
	"github.com/contractgateway/gateway/validators/strictjson"
)

func TestCorrectionsStaticFallback(t *testing.T) {
	doc, _ := strictjson.Parse([]byte(`{"ok":false}`))
	out := &repair.Outcome{Status: repair.StatusFallback, Doc: doc, Rungs: []string{"local", "llm_repair", "fallback:static"}}
	got := List(out)
	want := []Correction{{Path: "", Rung: "fallback", After: json.RawMessage(`{"ok":false}`), Kind: Major}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("corrections (-want +got):\n%s", diff)
	}
}

func TestDiffValues(t *testing.T) {
	a, _ := strictjson.Parse([]byte(`{"a":1,"b":[1,2,3],"c":{"d":"x"},"gone":true}`))
	b, _ := strictjson.Parse([]byte(`{"a":1,"b":[1,5],"c":{"d":"y"},"new":null}`))
	var got []string
	diffValues("", a, b, func(path string, before, after *strictjson.Value) {
		s := path + ":"
		if before != nil {
			s += string(strictjson.Marshal(before))
		}
		s += ">"
		if after != nil {
			s += string(strictjson.Marshal(after))
		}
		got = append(got, s)
	})
	want := []string{"b[1]:2>5", "b[2]:3>", "c.d:\"x\">\"y\"", "gone:true>", "new:>null"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("diff (-want +got):\n%s", diff)
	}
}

func TestModelRung(t *testing.T) {
	for rungs, want := range map[string]string{
		"":                                      "",
		"local":                                 "",
		"local,llm_repair_scoped,merge":         "llm_repair",
		"local,llm_repair,partial_regeneration": "regeneration",
		"local,llm_repair,rerun:0.3,local":      "rerun",
		"local,fallback:model":                  "fallback",
	} {
		var rs []string
		if rungs != "" {
			rs = strings.Split(rungs, ",")
		}
		if got := modelRung(rs); got != want {
			t.Errorf("modelRung(%q) = %q, want %q", rungs, got, want)
		}
	}
}

// TestCorrectionsFromFirst: what a model call wrote is the difference
// between the final document and the first answer as local repair left
// it, which the outcome carries (no second run of local repair); a local
// change's path is not listed twice, and without a first document the
// model's answer is one major change.
func TestCorrectionsFromFirst(t *testing.T) {
	parse := func(s string) *strictjson.Value {
		v, err := strictjson.ParseString(s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	tests := []struct {
		name  string
		first string
		want  []Correction
	}{
		{"model and local", `{"a":1,"b":2,"n":0}`, []Correction{
			{Path: "n", Rung: "local", Before: 0, After: 2, Kind: Minor, Fixer: "count"},
			{Path: "b", Rung: "llm_repair", Before: json.RawMessage(`2`), After: json.RawMessage(`3`), Kind: Major},
		}},
		{"no first document", "", []Correction{
			{Path: "n", Rung: "local", Before: 0, After: 2, Kind: Minor, Fixer: "count"},
			{Path: "", Rung: "llm_repair", After: json.RawMessage(`{"a":1,"b":3,"n":2}`), Kind: Major},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := &repair.Outcome{Status: repair.StatusRepaired, Doc: parse(`{"a":1,"b":3,"n":2}`),
				Rungs:   []string{"local", "llm_repair"},
				Changes: []repair.Change{{Path: "n", Before: 0, After: 2, Fixer: "count"}}}
			if tt.first != "" {
				out.First = parse(tt.first)
			}
			if diff := cmp.Diff(tt.want, List(out)); diff != "" {
				t.Errorf("List(%s) (-want +got):\n%s", tt.name, diff)
			}
		})
	}
}
