package gateway

import (
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/contractgateway/gateway/config"
	"github.com/contractgateway/gateway/middleware"
	"github.com/contractgateway/gateway/validators"
)

func TestDebugStoreRequests(t *testing.T) {
	fault := readFixture(t, "mcq_content_fault.json")
	url, _ := scriptedStatsGateway(t, func(c *config.Config) { c.DebugStore = true })

	var all struct{ Requests []DebugSummary }
	adminGet(t, url+"/admin/requests", &all)
	// Four ladders ran; the cache hit made none.
	var statuses []string
	for _, r := range all.Requests {
		statuses = append(statuses, r.Status)
	}
	if diff := cmp.Diff([]string{"failed", "repaired", "repaired", "valid"}, statuses); diff != "" {
		t.Errorf("statuses newest first (-want +got):\n%s", diff)
	}

	var failed struct{ Requests []DebugSummary }
	adminGet(t, url+"/admin/requests?status=failed&model=m", &failed)
	if len(failed.Requests) != 1 || !cmp.Equal(failed.Requests[0].CodesAfter, []string{"ANSWER_RANGE"}) {
		t.Fatalf("failed = %+v", failed.Requests)
	}
	var none struct{ Requests []DebugSummary }
	adminGet(t, url+"/admin/requests?status=failed&model=other", &none)
	if len(none.Requests) != 0 {
		t.Errorf("model=other: %+v", none.Requests)
	}

	var rec DebugRecord
	adminGet(t, url+"/admin/requests/"+failed.Requests[0].RequestID, &rec)
	if rec.First != fault || rec.Final != "" || rec.Status != "failed" || rec.LLMCalls != 1 {
		t.Errorf("failed record: status %q, llm calls %d, final %q, first kept: %v", rec.Status, rec.LLMCalls, rec.Final, rec.First == fault)
	}

	var repaired DebugRecord
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

func record(id, first string) middleware.Record {
	return middleware.Record{RequestID: id, Time: time.Now(), Contract: "c", Model: "m", Status: "repaired", First: first, Final: first}
}

func TestDebugStoreTTL(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, err := newDebugStore(0, time.Minute, nil)
		if err != nil {
			t.Fatal(err)
		}
		s.add(record("a", `{}`))
		time.Sleep(30 * time.Second)
		s.add(record("b", `{}`))
		time.Sleep(29 * time.Second)
		if _, ok := s.get("a"); !ok {
			t.Fatal("a gone before its TTL")
		}
		time.Sleep(2 * time.Second)
		if _, ok := s.get("a"); ok {
			t.Error("a kept after its TTL")
		}
		if _, ok := s.get("b"); !ok {
			t.Error("b gone before its TTL")
		}
		time.Sleep(30 * time.Second)
		if n := len(s.list("", "", "", 10)); n != 0 {
			t.Errorf("%d kept after every TTL", n)
		}
		if b, n := s.usage(); b != 0 || n != 0 {
			t.Errorf("usage = %d bytes, %d entries after expiry", b, n)
		}
	})
}

func TestDebugStoreBytes(t *testing.T) {
	s, err := newDebugStore(1, time.Hour, nil)
	if err != nil {
		t.Fatal(err)
	}
	s.add(record("a", `{}`))
	if _, n := s.usage(); n != 0 {
		t.Fatal("a record larger than the store was kept")
	}
	s, _ = newDebugStore(1000, time.Hour, nil)
	big := `"` + strings.Repeat("x", 300) + `"`
	for _, id := range []string{"a", "b", "c"} {
		s.add(record(id, big))
	}
	bytes, n := s.usage()
	if bytes > 1000 || n != 1 {
		t.Errorf("usage = %d bytes, %d entries; want ≤ 1000 and 1", bytes, n)
	}
	if _, ok := s.get("c"); !ok {
		t.Error("newest evicted")
	}
	if _, ok := s.get("a"); ok {
		t.Error("oldest kept")
	}
}

func TestDebugStoreRedacts(t *testing.T) {
	s, err := newDebugStore(0, time.Hour, []string{"/user/email", "items[*].name"})
	if err != nil {
		t.Fatal(err)
	}
	rec := record("r", `{"user":{"email":"a@b.c","id":1},"items":[{"name":"x","n":1},{"name":"y","n":2}]}`)
	rec.First = "Sure: {broken a@b.c"
	rec.Before = validators.Report{Violations: []validators.Violation{
		{Code: "X", Path: "user.email", Actual: "a@b.c"}, {Code: "Y", Path: "user.id", Actual: 1.0},
		{Code: "JSON_SYNTAX", Path: "1:9", Actual: "a@b.c"}}}
	rec.Corrections = []middleware.Correction{{Path: "items[1].name", Before: "y", After: "z"}, {Path: "items[1].n", Before: 2, After: 3}}
	s.add(rec)
	got, ok := s.get("r")
	if !ok {
		t.Fatal("not kept")
	}
	if want := `{"user":{"email":"[redacted]","id":1},"items":[{"name":"[redacted]","n":1},{"name":"[redacted]","n":2}]}`; got.Final != want {
		t.Errorf("final = %s\nwant    %s", got.Final, want)
	}
	if got.First != redacted {
		t.Errorf("unparsed first = %q, want it blanked", got.First)
	}
	acts := []any{}
	for _, v := range got.Before.Violations {
		acts = append(acts, v.Actual)
	}
	if diff := cmp.Diff([]any{redacted, 1.0, redacted}, acts); diff != "" {
		t.Errorf("report actuals (-want +got):\n%s", diff)
	}
	if got.Corrections[0].Before != redacted || got.Corrections[1].Before != 2 {
		t.Errorf("corrections = %+v", got.Corrections)
	}
	if _, err := newDebugStore(0, 0, []string{"/a/~2"}); err == nil {
		t.Error("bad pointer accepted")
	}
}
