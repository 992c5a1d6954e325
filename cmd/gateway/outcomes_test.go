package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/contractgateway/gateway/gateway/outcomes"
	"github.com/contractgateway/gateway/gateway/outcomes/sqlstore"
)

// TestOutcomesExport writes records into an SQLite store at the default
// path of a state directory and exports them as JSON lines and CSV.
func TestOutcomesExport(t *testing.T) {
	state := t.TempDir()
	path := filepath.Join(state, "contract-gateway", "outcomes.db")
	store, err := sqlstore.OpenSQLite(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	var recs []outcomes.Record
	for i, status := range []string{"valid", "failed", "repaired"} {
		recs = append(recs, outcomes.Record{ID: "r" + string(rune('0'+i)), Time: t0.Add(time.Duration(i) * time.Hour),
			Contract: "mcq@1", Model: "m", Status: status, CodesBefore: []string{"A", "B"}, CodesAfter: []string{}, Rungs: []string{}, Cache: "miss"})
	}
	if err := store.Write(t.Context(), recs); err != nil {
		t.Fatal(err)
	}
	store.Close()

	tests := []struct {
		name string
		env  map[string]string
		args []string
		code int
		out  []string // lines of stdout, in order
		err  string
	}{
		{"jsonl since", map[string]string{"XDG_STATE_HOME": state}, []string{"--since", "2026-03-10T12:30:00Z"}, 0,
			[]string{`{"id":"r2","time":"2026-03-10T14:00:00Z"`, `{"id":"r1","time":"2026-03-10T13:00:00Z"`}, ""},
		{"csv until", map[string]string{"GATEWAY_OUTCOMES_SQLITE": path}, []string{"--since", "2026-03-10T00:00:00Z", "--until", "2026-03-10T13:00:00Z", "--format", "csv"}, 0,
			[]string{"id,time,route,contract,model,upstream,key,status,codes_before", "r0,2026-03-10T12:00:00Z,,mcq@1,m,,,valid,A B,,,0,0"}, ""},
		{"no since", map[string]string{"XDG_STATE_HOME": state}, nil, 2, nil, "--since is required"},
		{"bad format", map[string]string{"XDG_STATE_HOME": state}, []string{"--since", "1h", "--format", "xml"}, 2, nil, "want jsonl or csv"},
		{"bad time", map[string]string{"XDG_STATE_HOME": state}, []string{"--since", "tuesday"}, 2, nil, "RFC 3339"},
		{"no store yet", map[string]string{"XDG_STATE_HOME": t.TempDir()}, []string{"--since", "1h"}, 1, nil, "no outcome store at"},
		{"no state directory", map[string]string{}, []string{"--since", "1h"}, 2, nil, "no outcome store"},
	}
	for _, tt := range tests {
		var out, errb bytes.Buffer
		err := run(context.Background(), append([]string{"outcomes", "export"}, tt.args...), func(k string) string { return tt.env[k] },
			strings.NewReader(""), &out, &errb)
		code := exitCode(err, &errb)
		if code != tt.code || !strings.Contains(errb.String(), tt.err) {
			t.Errorf("%s: exit %d, stderr %q; want %d with %q", tt.name, code, errb.String(), tt.code, tt.err)
			continue
		}
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		if len(tt.out) == 0 {
			if out.Len() != 0 {
				t.Errorf("%s: stdout %q, want none", tt.name, out.String())
			}
			continue
		}
		if len(lines) != len(tt.out) {
			t.Errorf("%s: %d lines, want %d:\n%s", tt.name, len(lines), len(tt.out), out.String())
			continue
		}
		for i, want := range tt.out {
			if !strings.HasPrefix(lines[i], want) {
				t.Errorf("%s: line %d = %q, want it to start with %q", tt.name, i, lines[i], want)
			}
		}
	}
}

// TestOutcomesExportCSVFormulas exports records whose client-chosen cells
// (the request id, the model name) start with what a spreadsheet reads as
// a formula; each comes out as text, with a leading single quote.
func TestOutcomesExportCSVFormulas(t *testing.T) {
	path := filepath.Join(t.TempDir(), "outcomes.db")
	store, err := sqlstore.OpenSQLite(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		id, model       string
		wantID, wantMod string
	}{
		{`=HYPERLINK("http://x","y")`, "m", `'=HYPERLINK(""http://x"",""y"")`, "m"},
		{"+1", "=cmd|' /C calc'!A0", "'+1", "'=cmd|' /C calc'!A0"},
		{"-2", "@SUM(A1)", "'-2", "'@SUM(A1)"},
		{"\tx", "\rm", "'\tx", "'\rm"},
		{"plain", "llama3.2:latest", "plain", "llama3.2:latest"},
	}
	var recs []outcomes.Record
	for i, tt := range tests {
		recs = append(recs, outcomes.Record{ID: tt.id, Time: t0.Add(-time.Duration(i) * time.Minute), Model: tt.model,
			Status: "valid", CodesBefore: []string{}, CodesAfter: []string{}, Rungs: []string{}, Cache: "miss"})
	}
	if err := store.Write(t.Context(), recs); err != nil {
		t.Fatal(err)
	}
	store.Close()

	var out, errb bytes.Buffer
	err = run(context.Background(), []string{"outcomes", "export", "--since", "2026-03-10T00:00:00Z", "--format", "csv"},
		func(k string) string { return map[string]string{"GATEWAY_OUTCOMES_SQLITE": path}[k] }, strings.NewReader(""), &out, &errb)
	if err != nil {
		t.Fatalf("export: %v (%s)", err, errb.String())
	}
	rows, err := csv.NewReader(&out).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != len(tests)+1 {
		t.Fatalf("%d rows, want %d:\n%q", len(rows), len(tests)+1, rows)
	}
	for i, tt := range tests {
		row := rows[i+1]
		if row[0] != strings.ReplaceAll(tt.wantID, `""`, `"`) || row[4] != tt.wantMod {
			t.Errorf("csvRow(id %q, model %q) = id %q, model %q; want %q, %q", tt.id, tt.model, row[0], row[4],
				strings.ReplaceAll(tt.wantID, `""`, `"`), tt.wantMod)
		}
	}
}
