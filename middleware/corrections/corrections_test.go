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
	got := List(nil, nil, "garbage", out)
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
