package gateway

import (
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/contractgateway/gateway/config"
	"github.com/contractgateway/gateway/gateway/stats"
)

const statsToken = "s3cret"

// scriptedStatsGateway sends five guarded requests: valid as written,
// repaired locally, repaired by one repair call, failed after one, and the
// first again from the cache.
func scriptedStatsGateway(t *testing.T, edit func(*config.Config)) (gwURL string, up *scriptedUpstream) {
	t.Helper()
	up = statsScript(t, nil)
	gw := newGuardedGateway(t, up, func(c *config.Config) {
		c.MaxLLMCalls = 1
		c.AdminToken = statsToken
		if edit != nil {
			edit(c)
		}
	})
	sendStatsScript(t, gw.URL, "")
	return gw.URL, up
}

// statsScript is the upstream of the stats script: valid, derivable (a
// local fix), a content fault, valid, and the fault again (the fifth
// request, a repeat of the first prompt, is a cache hit). mark, when set,
// edits each answer.
func statsScript(t *testing.T, mark func(string) string) *scriptedUpstream {
	t.Helper()
	if mark == nil {
		mark = func(s string) string { return s }
	}
	valid, fault := mark(readFixture(t, "mcq_valid.json")), mark(readFixture(t, "mcq_content_fault.json"))
	return &scriptedUpstream{answers: []string{valid, mark(readFixture(t, "mcq_derivable.txt")), fault, valid, fault}}
}

// sendStatsScript sends the stats script's five mcq requests to the
// gateway at url, each prompt after prefix: the fourth fails (422), the
// others are answered.
func sendStatsScript(t *testing.T, url, prefix string) {
	t.Helper()
	hdr := map[string]string{"X-Contract": "mcq"}
	for i, prompt := range []string{"one", "two", "three", "four", "one"} {
		resp, body := post(t, url+"/api/generate", `{"model":"m","stream":false,"prompt":"`+prefix+prompt+`"}`, hdr)
		want := http.StatusOK
		if i == 3 {
			want = http.StatusUnprocessableEntity
		}
		if resp.StatusCode != want {
			t.Fatalf("request %d: status %d: %s", i, resp.StatusCode, body)
		}
	}
}

// checkStatsScriptCounts checks what the stats script counts in got:
// statuses, violations by status, and codes.
func checkStatsScriptCounts(t *testing.T, got StatsReport) {
	t.Helper()
	wantCounts := []stats.Count{
		{Contract: "mcq@1", Model: "m", Status: "failed", Count: 1},
		{Contract: "mcq@1", Model: "m", Status: "repaired", Count: 2},
		{Contract: "mcq@1", Model: "m", Status: "valid", Count: 2},
	}
	if diff := cmp.Diff(wantCounts, got.Counts); diff != "" {
		t.Errorf("counts (-want +got):\n%s", diff)
	}
	wantViolations := []stats.Count{
		{Contract: "mcq@1", Model: "m", Code: "ANSWER_RANGE", Status: "failed", Count: 1},
		{Contract: "mcq@1", Model: "m", Code: "ANSWER_RANGE", Status: "repaired", Count: 1},
		{Contract: "mcq@1", Model: "m", Code: "JSON_SYNTAX", Status: "repaired", Count: 1},
	}
	if diff := cmp.Diff(wantViolations, got.Violations); diff != "" {
		t.Errorf("violations (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]int{"ANSWER_RANGE": 2, "JSON_SYNTAX": 1}, got.ByCode); diff != "" {
		t.Errorf("by code (-want +got):\n%s", diff)
	}
}

func adminGet(t *testing.T, url string, out any) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("Authorization", "Bearer "+statsToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %s", url, resp.StatusCode, body)
	}
	if err := json.Unmarshal(body, out); err != nil {
		t.Fatalf("GET %s: %v: %s", url, err, body)
	}
}

func TestAdminStatsCounts(t *testing.T) {
	url, _ := scriptedStatsGateway(t, nil)
	resp, body := get(t, url+"/admin/stats")
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("without token: %d %s", resp.StatusCode, body)
	}
	var got StatsReport
	adminGet(t, url+"/admin/stats", &got)

	if got.Requests != 5 {
		t.Errorf("requests = %d, want 5", got.Requests)
	}
	checkStatsScriptCounts(t, got)
	wantRungs := map[string]int{"first": 1, "local": 1, "llm_repair": 1, "failed": 1, "cache": 1}
	if diff := cmp.Diff(wantRungs, got.Rungs); diff != "" {
		t.Errorf("rungs (-want +got):\n%s", diff)
	}
	if want := (stats.Calls{First: 4, Repair: 2, Saved: 1}); got.LLMCalls != want {
		t.Errorf("llm calls = %+v, want %+v", got.LLMCalls, want)
	}
	if want := (stats.Cache{Hit: 1, Miss: 4, HitRate: 0.2}); got.Cache != want {
		t.Errorf("cache = %+v, want %+v", got.Cache, want)
	}
	if want := (stats.Tokens{FirstPrompt: 28, FirstOutput: 168, RepairPrompt: 14, RepairOutput: 84}); got.Tokens != want {
		t.Errorf("tokens = %+v, want %+v", got.Tokens, want)
	}
	if got.Latency.Samples != 5 || got.Latency.P50 <= 0 || got.Latency.P50 > got.Latency.P90 || got.Latency.P90 > got.Latency.P99 {
		t.Errorf("latency = %+v", got.Latency)
	}
	if len(got.Failures) != 1 || got.Failures[0].Status != "failed" || got.Failures[0].RequestID == "" ||
		!cmp.Equal(got.Failures[0].Codes, []string{"ANSWER_RANGE"}) {
		t.Errorf("recent failures = %+v", got.Failures)
	}
}
