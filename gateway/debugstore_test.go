package gateway

import (
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/contractgateway/gateway/config"
	"github.com/contractgateway/gateway/gateway/debugstore"
	"github.com/contractgateway/gateway/middleware"
)

func TestDebugStoreRequests(t *testing.T) {
	fault := readFixture(t, "mcq_content_fault.json")
	url, _ := scriptedStatsGateway(t, func(c *config.Config) { c.DebugStore = true })

	var all struct{ Requests []debugstore.Summary }
	adminGet(t, url+"/admin/requests", &all)
	// Four ladders ran; the cache hit made none.
	var statuses []string
	for _, r := range all.Requests {
		statuses = append(statuses, r.Status)
	}
	if diff := cmp.Diff([]string{"failed", "repaired", "repaired", "valid"}, statuses); diff != "" {
		t.Errorf("statuses newest first (-want +got):\n%s", diff)
	}

	var failed struct{ Requests []debugstore.Summary }
	adminGet(t, url+"/admin/requests?status=failed&model=m", &failed)
	if len(failed.Requests) != 1 || !cmp.Equal(failed.Requests[0].CodesAfter, []string{"ANSWER_RANGE"}) {
		t.Fatalf("failed = %+v", failed.Requests)
	}
	var none struct{ Requests []debugstore.Summary }
	adminGet(t, url+"/admin/requests?status=failed&model=other", &none)
	if len(none.Requests) != 0 {
		t.Errorf("model=other: %+v", none.Requests)
	}

	var rec debugstore.Record
	adminGet(t, url+"/admin/requests/"+failed.Requests[0].RequestID, &rec)
	if rec.First != fault || rec.Final != "" || rec.Status != "failed" || rec.LLMCalls != 1 {
		t.Errorf("failed record: status %q, llm calls %d, final %q, first kept: %v", rec.Status, rec.LLMCalls, rec.Final, rec.First == fault)
	}

	var repaired debugstore.Record
	adminGet(t, url+"/admin/requests/"+all.Requests[1].RequestID, &repaired)
	want := []middleware.Correction{{Path: "questions[0].answer", Rung: "llm_repair", Before: 7.0,
		After: 0.0, Kind: middleware.CorrectionMajor}}
	if diff := cmp.Diff(want, repaired.Corrections); diff != "" {
		t.Errorf("corrections (-want +got):\n%s", diff)
	}

	req, _ := http.NewRequest(http.MethodGet, url+"/admin/requests/nope", nil)
	req.Header.Set("Authorization", "Bearer "+statsToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("unknown id: %d", resp.StatusCode)
	}
}

func TestDebugStoreOffByDefault(t *testing.T) {
	url, _ := scriptedStatsGateway(t, nil)
	req, _ := http.NewRequest(http.MethodGet, url+"/admin/requests", nil)
	req.Header.Set("Authorization", "Bearer "+statsToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET /admin/requests with the store off: %d, want 404", resp.StatusCode)
	}
}
