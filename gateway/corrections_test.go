package gateway

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/contractgateway/gateway/config"
)

type correction struct {
	Path   string `json:"path"`
	Rung   string `json:"rung"`
	Before any    `json:"before"`
	After  any    `json:"after"`
	Kind   string `json:"kind"`
	Fixer  string `json:"fixer"`
}

func summaryOf(t *testing.T, url, reqBody string, hdr map[string]string) map[string]json.RawMessage {
	t.Helper()
	resp, body := post(t, url, reqBody, hdr)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	var m struct {
		Contract map[string]json.RawMessage `json:"contract"`
	}
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatal(err)
	}
	return m.Contract
}

func correctionsOf(t *testing.T, sum map[string]json.RawMessage) []correction {
	t.Helper()
	raw, ok := sum["corrections"]
	if !ok {
		t.Fatalf("no corrections in the summary: %s", sum)
	}
	var out []correction
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestCorrectionsReport(t *testing.T) {
	valid, fault := readFixture(t, "mcq_valid.json"), readFixture(t, "mcq_content_fault.json")
	ask := map[string]string{"X-Contract": "mcq", "X-Contract-Report": "corrections"}
	body := `{"model":"m","stream":false,"prompt":"quiz"}`

	t.Run("local", func(t *testing.T) {
		up := &scriptedUpstream{answers: []string{readFixture(t, "mcq_derivable.txt")}}
		gw := newGuardedGateway(t, up, nil)
		got := correctionsOf(t, summaryOf(t, gw.URL+"/api/generate", body, ask))
		minor := func(path string, before, after any, fixer string) correction {
			return correction{Path: path, Rung: "local", Before: before, After: after, Kind: "minor", Fixer: fixer}
		}
		want := []correction{
			minor("2:1", "Here you go:", "", "strip_prose"),
			minor("3:1", "```json", "", "strip_fence"),
			minor("10:25", ",", "", "remove_extra_comma"),
			minor("115:1", "```", "", "strip_fence"),
			minor("116:1", "Enjoy!", "", "strip_prose"),
			minor("meta.question_count", 4.0, 3.0, "derive:question_count_mismatch"),
			minor("questions[0].question", "Which keyword defines a function in Python?", "1. Which keyword defines a function in Python?", "derive:question_numbering"),
			minor("questions[1].question_id", "Q7", "Q002", "derive:question_id_sequence"),
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("corrections (-want +got):\n%s", diff)
		}
	})
	t.Run("model", func(t *testing.T) {
		up := &scriptedUpstream{answers: []string{fault, valid}}
		gw := newGuardedGateway(t, up, nil)
		got := correctionsOf(t, summaryOf(t, gw.URL+"/api/generate", body, ask))
		want := []correction{{Path: "questions[0].answer", Rung: "llm_repair", Before: 7.0, After: 0.0, Kind: "major"}}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("corrections (-want +got):\n%s", diff)
		}
	})
	t.Run("valid as written", func(t *testing.T) {
		up := &scriptedUpstream{answers: []string{valid}}
		gw := newGuardedGateway(t, up, nil)
		if got := correctionsOf(t, summaryOf(t, gw.URL+"/api/generate", body, ask)); len(got) != 0 {
			t.Errorf("corrections = %+v, want none", got)
		}
	})
	t.Run("not asked", func(t *testing.T) {
		up := &scriptedUpstream{answers: []string{fault, valid}}
		gw := newGuardedGateway(t, up, nil)
		sum := summaryOf(t, gw.URL+"/api/generate", body, map[string]string{"X-Contract": "mcq"})
		if _, ok := sum["corrections"]; ok {
			t.Errorf("corrections without asking: %s", sum["corrections"])
		}
	})
	t.Run("route setting", func(t *testing.T) {
		up := &scriptedUpstream{answers: []string{fault, valid}}
		gw := newGuardedGateway(t, up, func(c *config.Config) {
			c.Routes = []config.Route{{Model: "quiz", Upstream: "m", Contract: "mcq", Report: "corrections"}}
		})
		got := correctionsOf(t, summaryOf(t, gw.URL+"/api/generate", `{"model":"quiz","stream":false,"prompt":"q"}`, nil))
		if len(got) != 1 || got[0].Kind != "major" || got[0].Rung != "llm_repair" {
			t.Errorf("corrections = %+v", got)
		}
	})
}

// TestCorrectionsReportCacheHit: a repeated request whose answer was
// repaired gets from the cache the corrections the first one got.
func TestCorrectionsReportCacheHit(t *testing.T) {
	ask := map[string]string{"X-Contract": "mcq", "X-Contract-Report": "corrections"}
	quiz := func(c *config.Config) {
		c.Routes = []config.Route{{Model: "quiz", Upstream: "m", Contract: "mcq", Report: "corrections"}}
	}
	tests := []struct {
		name    string
		answers []string
		edit    func(*config.Config)
		body    string
		hdr     map[string]string
	}{
		{"local repair", []string{readFixture(t, "mcq_derivable.txt")}, nil, `{"model":"m","stream":false,"prompt":"quiz"}`, ask},
		{"model repair", []string{readFixture(t, "mcq_content_fault.json"), readFixture(t, "mcq_valid.json")}, nil,
			`{"model":"m","stream":false,"prompt":"quiz"}`, ask},
		{"route setting", []string{readFixture(t, "mcq_content_fault.json"), readFixture(t, "mcq_valid.json")}, quiz,
			`{"model":"quiz","stream":false,"prompt":"quiz"}`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gw := newGuardedGateway(t, &scriptedUpstream{answers: tt.answers}, tt.edit)
			miss := summaryOf(t, gw.URL+"/api/generate", tt.body, tt.hdr)
			hit := summaryOf(t, gw.URL+"/api/generate", tt.body, tt.hdr)
			if string(miss["cache"]) != `"miss"` || string(hit["cache"]) != `"hit"` {
				t.Fatalf("cache %s then %s, want miss then hit", miss["cache"], hit["cache"])
			}
			want := correctionsOf(t, miss)
			if len(want) == 0 {
				t.Fatal("the first answer reports no corrections; want a repaired answer's")
			}
			if diff := cmp.Diff(want, correctionsOf(t, hit)); diff != "" {
				t.Errorf("corrections of the hit (-miss +hit):\n%s", diff)
			}
		})
	}
}
