package gateway

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/contractgateway/gateway/config"
)

// TestAdminStats: after scripted requests, /admin/stats says exactly what
// happened — by model × code × status, model calls, fixes, what local
// repair saved, which rung answered, the cache, tokens — under the admin
// token.
func TestAdminStats(t *testing.T) {
	up := &scriptedUpstream{answers: []string{
		readFixture(t, "mcq_valid.json"),         // 1: valid as written
		readFixture(t, "mcq_derivable.txt"),      // 2: repaired locally
		readFixture(t, "mcq_content_fault.json"), // 3: repaired by the model…
		readFixture(t, "mcq_valid.json"),         //    …with this reply
	}}
	gw := newGuardedGateway(t, up, nil)
	mcq := map[string]string{"X-Contract": "mcq"}
	for i, prompt := range []string{"one", "two", "three", "one"} {
		resp, b := post(t, gw.URL+"/api/generate", `{"model":"m","prompt":"`+prompt+`","stream":false}`, mcq)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("request %d: %d %s", i, resp.StatusCode, b)
		}
	}
	resp, b := get(t, gw.URL+"/admin/stats")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/admin/stats: %d %s", resp.StatusCode, b)
	}
	var got statsBody
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if got.Requests != 4 || got.LLMCalls != 1 || got.SavedByLocal != 1 || got.LocalFixes == 0 {
		t.Errorf("requests %d, llm_calls %d, saved %d, local fixes %d; want 4, 1, 1, >0", got.Requests, got.LLMCalls, got.SavedByLocal, got.LocalFixes)
	}
	if diff := cmp.Diff(map[string]int{"miss": 3, "hit": 1}, got.Cache); diff != "" || got.CacheHitRate != 0.25 {
		t.Errorf("cache %v rate %v (-want +got):\n%s", got.Cache, got.CacheHitRate, diff)
	}
	// The scripted upstream counts 7 prompt and 42 output tokens a call.
	if want := (tokenStats{FirstPrompt: 21, FirstOutput: 126, RepairPrompt: 7, RepairOutput: 42}); got.Tokens != want {
		t.Errorf("tokens %+v, want %+v", got.Tokens, want)
	}
	if got.Rungs["first"] != 1 || got.Rungs["cache"] != 1 || got.Rungs["local"] != 1 || got.Rungs["llm_repair_scoped"] != 1 {
		t.Errorf("accepted_by_rung %v, want first, cache, local and llm_repair_scoped once each", got.Rungs)
	}
	valid := 0
	for _, r := range got.Counts {
		if r.Model != "m" {
			t.Errorf("row %+v: model %q, want the upstream model m", r, r.Model)
		}
		if r.Code == "" && r.Status == "valid" {
			valid = r.Count
		}
		if r.Code != "" && r.Status != "repaired" {
			t.Errorf("row %+v: a violation of a request that ended %s, want repaired", r, r.Status)
		}
	}
	if valid != 2 {
		t.Errorf("valid requests without violations = %d, want 2 (the first and its cache hit)", valid)
	}
	if len(got.Failures) != 0 || got.LatencyMS["p50"] <= 0 {
		t.Errorf("failures %v, latency %v; want none and a p50", got.Failures, got.LatencyMS)
	}
}

// TestAdminStatsNeedsToken: with an admin token configured, /admin/stats
// answers only with it.
func TestAdminStatsNeedsToken(t *testing.T) {
	gw := newGuardedGateway(t, &scriptedUpstream{answers: []string{`{}`}}, func(c *config.Config) { c.AdminToken = "s3cret" })
	if resp, _ := get(t, gw.URL+"/admin/stats"); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("/admin/stats without the token = %d, want 401", resp.StatusCode)
	}
	req, _ := http.NewRequest(http.MethodGet, gw.URL+"/admin/stats", nil)
	req.Header.Set("Authorization", "Bearer s3cret")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("/admin/stats with the token = %d, want 200", resp.StatusCode)
	}
}
