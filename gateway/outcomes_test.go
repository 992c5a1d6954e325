package gateway

import (
	"database/sql"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	_ "modernc.org/sqlite"

	"github.com/contractgateway/gateway/config"
	"github.com/contractgateway/gateway/gateway/outcomes"
)

// Markers of what the client sent and what the model answered: neither
// may reach the outcome store unless the debug store is on, and the
// prompt never.
const (
	promptMarker = "PROMPT-MARKER-5c1e"
	answerMarker = "ANSWER-MARKER-7f3a"
)

// TestOutcomeStoreRecordsGuardedRequests sends the stats script through a
// gateway with an SQLite outcome store, closes it, and opens a second
// gateway on the same file: the records survive the restart, list newest
// first with their codes, and hold no prompt or answer text unless the
// debug store is on.
func TestOutcomeStoreRecordsGuardedRequests(t *testing.T) {
	tests := []struct {
		name  string
		debug bool
	}{
		{"debug store off", false},
		{"debug store on", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "state", "outcomes.db")
			up := statsScript(t, func(answer string) string {
				return strings.Replace(answer, "Python basics", answerMarker+" Python basics", 1)
			})
			ups := httptest.NewServer(up)
			defer ups.Close()
			start := func() (*Server, *httptest.Server) {
				cfg := config.Default()
				cfg.Upstream, cfg.MaxLLMCalls, cfg.AdminToken = ups.URL, 1, statsToken
				cfg.DebugStore = tt.debug
				cfg.Outcomes.SQLite = path
				srv, err := Build(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
				if err != nil {
					t.Fatalf("Build: %v", err)
				}
				return srv, httptest.NewServer(srv.Handler())
			}
			srv, gw := start()
			sendStatsScript(t, gw.URL, promptMarker+" ")
			gw.Close()
			srv.Close() // writes what is queued

			srv, gw = start()
			defer srv.Close()
			defer gw.Close()
			var list struct {
				Outcomes []outcomes.Record `json:"outcomes"`
			}
			adminGet(t, gw.URL+"/admin/outcomes", &list)
			var got []string
			for _, r := range list.Outcomes {
				got = append(got, fmt.Sprintf("%s %s %s %v>%v %s", r.Status, r.Contract, r.Model, r.CodesBefore, r.CodesAfter, r.Cache))
			}
			want := []string{
				"valid mcq@1 m []>[] hit",
				"failed mcq@1 m [ANSWER_RANGE]>[ANSWER_RANGE] miss",
				"repaired mcq@1 m [ANSWER_RANGE]>[] miss",
				"repaired mcq@1 m [JSON_SYNTAX]>[] miss",
				"valid mcq@1 m []>[] miss",
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("outcomes after restart, newest first (-want +got):\n%s", diff)
			}
			var failed struct {
				Outcomes []outcomes.Record `json:"outcomes"`
			}
			adminGet(t, gw.URL+"/admin/outcomes?status=failed&code=ANSWER_RANGE", &failed)
			if len(failed.Outcomes) != 1 || failed.Outcomes[0].LLMCalls != 1 || failed.Outcomes[0].ID == "" {
				t.Errorf("failed with ANSWER_RANGE = %+v, want the one failure with its model call", failed.Outcomes)
			}
			req, _ := http.NewRequest(http.MethodGet, gw.URL+"/admin/outcomes", nil)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusUnauthorized {
				t.Errorf("GET /admin/outcomes without the admin token = %d, want 401", resp.StatusCode)
			}

			// Every column of every row, read raw.
			db, err := sql.Open("sqlite", path)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			texts := map[string]bool{}
			for _, table := range []string{"outcomes", "outcome_codes"} {
				rows, err := db.Query("SELECT * FROM " + table)
				if err != nil {
					t.Fatal(err)
				}
				cols, _ := rows.Columns()
				for rows.Next() {
					vals := make([]any, len(cols))
					ptrs := make([]any, len(cols))
					for i := range vals {
						ptrs[i] = &vals[i]
					}
					if err := rows.Scan(ptrs...); err != nil {
						t.Fatal(err)
					}
					for i, v := range vals {
						s := fmt.Sprintf("%s", v)
						if strings.Contains(s, promptMarker) {
							t.Errorf("%s.%s holds the prompt: %.80q", table, cols[i], s)
						}
						if strings.Contains(s, answerMarker) {
							texts[table+"."+cols[i]] = true
						}
					}
				}
				rows.Close()
			}
			wantTexts := map[string]bool{}
			if tt.debug {
				wantTexts = map[string]bool{"outcomes.first_text": true, "outcomes.final_text": true}
			}
			if diff := cmp.Diff(wantTexts, texts); diff != "" {
				t.Errorf("columns holding the answer (-want +got):\n%s", diff)
			}
		})
	}
}

// TestOutcomeStoreOff checks that a gateway whose config names no store
// (as every test's config.Default) keeps no records and says so.
func TestOutcomeStoreOff(t *testing.T) {
	url, _ := scriptedStatsGateway(t, nil)
	for _, path := range []string{"/admin/outcomes", "/admin/trends"} {
		req, _ := http.NewRequest(http.MethodGet, url+path, nil)
		req.Header.Set("Authorization", "Bearer "+statsToken)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound || !strings.Contains(string(body), "outcome store is off") {
			t.Errorf("GET %s with the store off = %d %s, want 404 saying so", path, resp.StatusCode, body)
		}
	}
}
