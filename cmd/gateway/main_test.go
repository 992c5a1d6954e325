package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// runCLI runs the program in-process and returns its exit code and output.
func runCLI(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	err := run(context.Background(), args, func(string) string { return "" }, strings.NewReader(stdin), &out, &errb)
	return exitCode(err, &errb), out.String(), errb.String()
}

func TestValidateExitCodes(t *testing.T) {
	tests := []struct {
		name string
		args []string
		code int
		has  string
	}{
		{"valid fixture", []string{"validate", "--contract", "mcq", "../../contracts/builtin/mcq/testdata/valid_fenced_model_output.txt"}, 0, `"valid": true`},
		{"broken example", []string{"validate", "--contract", "mcq", "../../examples/mcq-broken.txt"}, 1, `"JSON_SYNTAX"`},
		{"flags after file", []string{"validate", "../../examples/mcq-broken.txt", "--contract", "mcq"}, 1, `"repair_type": "JSON_PARSE"`},
		{"unknown contract", []string{"validate", "--contract", "nope", "x"}, 2, ""},
		{"no contract", []string{"validate", "x"}, 2, ""},
		{"bad param", []string{"validate", "--contract", "mcq", "--param", "options=Q", "../../examples/mcq-broken.txt"}, 2, ""},
		{"missing file", []string{"validate", "--contract", "mcq", "does-not-exist.txt"}, 2, ""},
		{"unknown flag", []string{"validate", "--nope"}, 2, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, _ := runCLI(t, "", tt.args...)
			if code != tt.code || !strings.Contains(out, tt.has) {
				t.Errorf("validate %v = exit %d, stdout %.300q; want exit %d with %q", tt.args, code, out, tt.code, tt.has)
			}
		})
	}
}

// TestValidateHostileInputs runs validate on files no model should write
// but some will, or a user will pass by mistake: every one is a report with
// exit 1 (or 0 when it holds valid JSON), never a crash or a usage error.
func TestValidateHostileInputs(t *testing.T) {
	dir := t.TempDir()
	garbage := make([]byte, 4096)
	for i := range garbage {
		garbage[i] = byte(i*7919>>3) ^ byte(i)
	}
	tests := []struct {
		name string
		data []byte
		code int
		has  string
	}{
		{"empty file", nil, 1, `"NO_JSON_BLOCK"`},
		{"binary garbage", garbage, 1, `"NO_JSON_BLOCK"`},
		{"5 MB of [", bytes.Repeat([]byte("["), 5<<20), 1, `"at most 10000 nested arrays and objects"`},
		{"2 MB string", []byte(`{"a":"` + strings.Repeat("x", 2<<20) + `"}`), 0, `"valid": true`},
		{"invalid UTF-8", []byte("{\"a\":\"\xff\"}"), 1, `"actual": "\\xff"`},
		{"byte order mark", []byte("\xef\xbb\xbf{\"a\": 1}\n"), 1, `"hint": "Remove the byte order mark at the start of the document."`},
		{"CRLF line endings", []byte("{\r\n  \"a\": 1,\r\n}\r\n"), 1, `"path": "2:9"`},
		{"json fence with CRLF", []byte("Here you go:\r\n```json\r\n{\r\n  \"a\": 1\r\n}\r\n```\r\nDone.\r\n"), 0, `"valid": true`},
		{"truncated json fence with CRLF", []byte("Here you go:\r\n```json\r\n{\r\n  \"a\": [1,"), 1, `"JSON_TRUNCATED"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "_"))
			if err := os.WriteFile(path, tt.data, 0o644); err != nil {
				t.Fatal(err)
			}
			code, out, errOut := runCLI(t, "", "validate", "--contract", "json", path)
			if code != tt.code || !strings.Contains(out, tt.has) {
				t.Errorf("validate %s = exit %d, stdout %.400q, stderr %q; want exit %d with %q", tt.name, code, out, errOut, tt.code, tt.has)
			}
		})
	}
}

func TestUsageExitCodes(t *testing.T) {
	tests := []struct {
		name string
		args []string
		code int
		// errHas must appear on stderr.
		errHas string
	}{
		{"validate help", []string{"validate", "-h"}, 0, "-contract"},
		{"contracts help", []string{"contracts", "--help"}, 0, "-contracts"},
		{"input is a directory", []string{"validate", "--contract", "json", "."}, 2, "is a directory"},
		{"lint of a missing directory", []string{"contracts", "lint", "does-not-exist"}, 2, "does-not-exist"},
		{"lint of a file", []string{"contracts", "lint", "main.go"}, 2, "main.go"},
		{"list with an argument", []string{"contracts", "list", "mcq"}, 2, "contracts list takes no arguments"},
		{"show without a name", []string{"contracts", "show"}, 2, "contracts show NAME"},
		{"show of an unknown contract", []string{"contracts", "show", "nope"}, 2, `unknown contract "nope"`},
		{"lint of two directories", []string{"contracts", "lint", "a", "b"}, 2, "contracts lint DIR"},
		{"unknown subcommand", []string{"contracts", "frob"}, 2, `unknown contracts subcommand "frob"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, errOut := runCLI(t, "", tt.args...)
			if code != tt.code || !strings.Contains(errOut, tt.errHas) {
				t.Errorf("%v = exit %d, stderr %q; want exit %d with %q", tt.args, code, errOut, tt.code, tt.errHas)
			}
		})
	}
}

func TestValidateStdinAndSchema(t *testing.T) {
	dir := t.TempDir()
	schema := filepath.Join(dir, "s.json")
	if err := os.WriteFile(schema, []byte(`{"type":"object","required":["a"],"properties":{"a":{"type":"integer"}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, _ := runCLI(t, `{"a":"x"}`, "validate", "--schema", schema, "-")
	if code != 1 || !strings.Contains(out, `"SCHEMA_TYPE"`) {
		t.Errorf("exit %d, %s", code, out)
	}
	code, _, _ = runCLI(t, "Here:\n```json\n{\"a\": 1}\n```", "validate", "--schema", schema)
	if code != 0 {
		t.Errorf("fenced valid document: exit %d, want 0", code)
	}
}

// TestValidateSyntaxFixable: on the command line, a syntax error that
// local repair fixes is reported fixable, one it cannot fix is not, and
// neither changes the exit code.
func TestValidateSyntaxFixable(t *testing.T) {
	tests := []struct {
		name, in string
		want     bool
	}{
		{"trailing comma", `{"a": 1,}`, true},
		{"missing colon", `{"name" "Alice", "age" 30}`, true},
		{"truncated", `{"a": "x" "b": [1, 2`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, _ := runCLI(t, tt.in, "validate", "--contract", "json", "-")
			var r struct {
				Violations []struct {
					Code    string `json:"code"`
					Fixable bool   `json:"fixable"`
				} `json:"violations"`
			}
			if err := json.Unmarshal([]byte(out), &r); err != nil || code != 1 || len(r.Violations) == 0 {
				t.Fatalf("validate %q = exit %d, %s (%v); want exit 1 and a report", tt.in, code, out, err)
			}
			if v := r.Violations[0]; v.Fixable != tt.want {
				t.Errorf("validate %q: %s fixable = %v, want %v", tt.in, v.Code, v.Fixable, tt.want)
			}
		})
	}
}

func TestRepairOffline(t *testing.T) {
	report := filepath.Join(t.TempDir(), "report.json")
	code, out, _ := runCLI(t, "", "repair", "--offline", "--contract", "mcq", "--report", report, "../../examples/mcq-broken.txt")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	// The output is the repaired document, strict and valid.
	code2, vout, _ := runCLI(t, out, "validate", "--contract", "mcq", "-")
	if code2 != 0 {
		t.Errorf("repaired output does not validate: %s", vout)
	}
	var rep struct {
		Valid   bool `json:"valid"`
		Changes []struct {
			Path  string `json:"path"`
			Fixer string `json:"fixer"`
		} `json:"changes"`
	}
	b, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	fixers := map[string]bool{}
	for _, c := range rep.Changes {
		fixers[c.Fixer] = true
	}
	for _, want := range []string{"strip_prose", "strip_fence", "remove_comment", "remove_trailing_comma", "insert_colon", "coerce",
		"derive:question_count_mismatch", "derive:test_duration_mismatch", "derive:question_numbering", "derive:cognitive_level_mismatch", "derive:question_id_sequence"} {
		if !fixers[want] {
			t.Errorf("change log lacks fixer %q; got %v", want, fixers)
		}
	}
	if !rep.Valid {
		t.Error("report says invalid")
	}

	// Content faults are never fixed locally: empty stdout, exit 1.
	code, out, _ = runCLI(t, "", "repair", "--offline", "--contract", "mcq", "../../gateway/testdata/guard/mcq_content_fault.json")
	if code != 1 || out != "" {
		t.Errorf("content fault: exit %d, stdout %q; want 1 and nothing", code, out)
	}
	code, _, _ = runCLI(t, "", "repair", "--contract", "mcq", "x")
	if code != 2 {
		t.Errorf("repair without --offline or --ollama: exit %d, want 2", code)
	}
}

func TestContractsCommands(t *testing.T) {
	code, out, _ := runCLI(t, "", "contracts", "list")
	for _, id := range []string{"mcq@1", "oracle-score@1", "extraction@1", "extraction@2", "planning@1", "article-structure@1", "extract-prompts@1", "link-plan@1", "json@1"} {
		if code != 0 || !strings.Contains(out, id) {
			t.Errorf("contracts list lacks %s (exit %d)", id, code)
		}
	}
	code, out, _ = runCLI(t, "", "contracts", "show", "mcq")
	if code != 0 || !strings.Contains(out, `"id": "mcq@1"`) || !strings.Contains(out, `"schema"`) {
		t.Errorf("contracts show mcq: exit %d %.200s", code, out)
	}
	code, out, _ = runCLI(t, "", "contracts", "lint", "../../contracts/builtin")
	if code != 0 || !strings.Contains(out, " 0 failed") {
		t.Errorf("lint builtin: exit %d\n%s", code, out)
	}
	// A contract whose fixture lies about itself fails lint.
	dir := t.TempDir()
	mustWrite(t, filepath.Join(dir, "contract.json"), `{"name":"t","version":"1","schema":"schema.json","shape":{},"policy":{"max_repairs":0},"fallback":{}}`)
	mustWrite(t, filepath.Join(dir, "schema.json"), `{"type":"object","required":["a"]}`)
	mustWrite(t, filepath.Join(dir, "testdata", "valid_missing_a.json"), `{}`)
	code, out, _ = runCLI(t, "", "contracts", "lint", dir)
	if code != 1 || !strings.Contains(out, "FAIL t@1 valid_missing_a.json") {
		t.Errorf("lint of a lying fixture: exit %d\n%s", code, out)
	}
	// Unknown keys in a contract file are load errors naming the key.
	mustWrite(t, filepath.Join(dir, "contract.json"), `{"name":"t","version":"1","shcema":"schema.json"}`)
	code, out, _ = runCLI(t, "", "contracts", "lint", dir)
	if code != 1 || !strings.Contains(out, "shcema") {
		t.Errorf("unknown key: exit %d, stdout %q", code, out)
	}
}

func mustWrite(t *testing.T, path, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestUnknownCommand(t *testing.T) {
	code, _, errOut := runCLI(t, "", "frobnicate")
	if code != 2 || !strings.Contains(errOut, "unknown command") {
		t.Errorf("exit %d, %q", code, errOut)
	}
	var ee *exitError
	if !errors.As(usageError("x"), &ee) || ee.code != 2 {
		t.Error("usageError is not exit 2")
	}
}

// TestRepairWithModel runs `gateway repair` without --offline against a
// fake Ollama: the content fault goes to the model with the repair prompt,
// the model's fenced answer comes back valid, exit 0.
func TestRepairWithModel(t *testing.T) {
	valid, err := os.ReadFile("../../gateway/testdata/guard/mcq_valid.json")
	if err != nil {
		t.Fatal(err)
	}
	var calls []map[string]any
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req map[string]any
		_ = json.NewDecoder(r.Body).Decode(&req)
		calls = append(calls, req)
		b, _ := json.Marshal(map[string]any{"model": req["model"], "response": "Fixed:\n```json\n" + string(valid) + "```", "done": true})
		w.Write(b)
	}))
	defer up.Close()
	code, out, errOut := runCLI(t, "", "repair", "--contract", "mcq", "--ollama", up.URL, "--model", "qwen2.5", "../../gateway/testdata/guard/mcq_content_fault.json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if len(calls) != 1 || calls[0]["model"] != "qwen2.5" || !strings.HasPrefix(calls[0]["system"].(string), "You are a JSON repair engine.") {
		t.Errorf("model calls = %v", calls)
	}
	if code, vout, _ := runCLI(t, out, "validate", "--contract", "mcq", "-"); code != 0 {
		t.Errorf("repaired output does not validate: %s", vout)
	}
	code, _, _ = runCLI(t, "", "repair", "--contract", "mcq", "--ollama", "not a url", "--model", "m", "../../gateway/testdata/guard/mcq_content_fault.json")
	if code != 2 {
		t.Errorf("bad --ollama: exit %d, want 2", code)
	}
}
