package debugstore

import (
	"encoding/json"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/contractgateway/gateway/middleware"
	"github.com/contractgateway/gateway/validators"
	"github.com/contractgateway/gateway/validators/strictjson"
)

// TestDebugStoreRedactsEveryShape keeps answers of every shape the guard
// accepts with /user/email redacted: the address must not be found in
// anything the store answers, and the rest of a parseable document stays.
func TestDebugStoreRedactsEveryShape(t *testing.T) {
	const secret = "jane.doe@example.com"
	user := `{"user":{"email":"` + secret + `","id":1}}`
	tests := []struct {
		name string
		text string
		// prefix is the path of the document in the reports: the
		// validator's paths for the shape, dotted and as a pointer.
		prefix, pointer string
		// kept is a part of the document that must survive; "" when the
		// text cannot be parsed and is blanked whole.
		kept string
	}{
		{"bare object", user, "", "", `"id":1`},
		{"wrapped", `{"data":` + user + `}`, "data.", "/data", `"id":1`},
		{"wrapped, unwrapped by the contract", `{"result":` + user + `}`, "", "", `"id":1`},
		{"top-level array", `[` + user + `,{"user":{"email":"` + secret + `","id":2}}]`, "[1].", "/1", `"id":2`},
		{"wrapped array", `{"data":[` + user + `]}`, "data[0].", "/data/0", `"id":1`},
		{"prose and fence", "Sure, " + secret + " is the user:\n```json\n" + user + "\n```\nAnything else?", "", "", `"id":1`},
		{"think section", "<think>the email is " + secret + "</think>\n" + user, "", "", `"id":1`},
		{"unparseable", `Here: {"user":{"email":"` + secret + `",`, "", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := New(0, time.Hour, []string{"/user/email"})
			if err != nil {
				t.Fatal(err)
			}
			rec := record("r", tt.text)
			p := tt.prefix
			rec.Before = validators.Report{Violations: []validators.Violation{
				{Code: "PATTERN", Path: p + "user.email", Actual: secret, Hint: "Fix " + secret + "."},
				{Code: "TYPE", Path: p + "user", Actual: map[string]any{"email": secret}},
				{Code: "JSON_SYNTAX", Path: "1:9", Actual: secret},
				{Code: "FIXED", Path: p + "user", Fix: &validators.PatchOp{Op: "replace", Path: tt.pointer + "/user",
					Value: json.RawMessage(`{"email":"` + secret + `"}`)}},
			}}
			rec.After = rec.Before
			rec.Corrections = []middleware.Correction{
				{Path: p + "user.email", Before: secret, After: "x"},
				{Path: p + "user", Before: nil, After: json.RawMessage(`{"email":"` + secret + `"}`)},
				{Path: "", Before: nil, After: json.RawMessage(user)},
				{Path: "1:9", Before: secret, After: secret},
			}
			s.Add(rec)
			got, ok := s.Get("r")
			if !ok {
				t.Fatal("not kept")
			}
			b, err := json.Marshal(got)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(b), secret) {
				t.Errorf("the redacted value is kept:\n%s", b)
			}
			for _, text := range []string{got.First, got.Final} {
				if tt.kept == "" && text != redacted {
					t.Errorf("unparseable text kept as %q, want it blanked", text)
				}
				if tt.kept != "" && !strings.Contains(text, tt.kept) {
					t.Errorf("text %q lost %s", text, tt.kept)
				}
			}
		})
	}
}

// deepAnswer is a 9,999-level answer: the secret at the top, where
// /user/email names it, and again at the bottom.
func deepAnswer(secret string) string {
	const arrays = 9999 - 4
	return `{"user":{"email":"` + secret + `","n":` + strings.Repeat("[", arrays) +
		`{"user":{"email":"` + secret + `"}}` + strings.Repeat("]", arrays) + `}}`
}

// TestDebugStoreDeepAnswerBounded keeps a 9,999-level answer with
// redaction on: it costs megabytes, not gigabytes, and is still kept,
// redacted and cut at the depth bound.
func TestDebugStoreDeepAnswerBounded(t *testing.T) {
	const secret = "deep@example.com"
	deep := deepAnswer(secret)
	deepPath := "user.n" + strings.Repeat("[0]", 9000)
	rec := record("deep", "Here:\n```json\n"+deep+"\n```")
	rec.Final = deep
	rec.Before = validators.Report{Violations: []validators.Violation{{Code: "X", Path: deepPath, Actual: json.RawMessage(`[[[1]]]`)}}}
	rec.Corrections = []middleware.Correction{{Path: "user.n", Before: json.RawMessage(deep[strings.Index(deep, `"n":`)+4 : len(deep)-2]), After: json.RawMessage(`[]`)}}

	s, err := New(0, time.Hour, []string{"/user/email"})
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	s.Add(rec)
	runtime.ReadMemStats(&after)
	alloc := after.TotalAlloc - before.TotalAlloc
	if alloc > 50<<20 {
		t.Errorf("keeping a %d-byte answer nested 9,999 deep allocated %d MB, want < 50", len(deep), alloc>>20)
	}
	t.Logf("keeping a %d-byte answer nested 9,999 deep allocated %d KB", len(deep), alloc>>10)

	got, ok := s.Get("deep")
	if !ok {
		t.Fatal("deep answer not kept")
	}
	b, _ := json.Marshal(got)
	if strings.Contains(string(b), secret) {
		t.Errorf("the redacted value is kept (%d bytes of record)", len(b))
	}
	for _, text := range []string{got.First, got.Final} {
		if !strings.Contains(text, `"email":"[redacted]"`) || !strings.Contains(text, tooDeep) {
			t.Errorf("text not redacted and cut at depth %d: %.200s", MaxDepth, text)
		}
	}
	if bytes, _ := s.Usage(); bytes > RecordMaxBytes {
		t.Errorf("record of %d bytes, over the per-record bound", bytes)
	}
}

// TestDebugStoreRecordBound keeps a record over the per-record bound cut,
// with a marker, instead of letting it take the store.
func TestDebugStoreRecordBound(t *testing.T) {
	huge := `{"text":"` + strings.Repeat("x", 3*RecordMaxBytes) + `"}`
	tests := []struct {
		name string
		rec  middleware.Record
		want string // in Truncated
	}{
		{"texts cut", record("a", huge), "texts cut"},
		{"summary only", func() middleware.Record {
			r := record("b", `{}`)
			r.Corrections = []middleware.Correction{{Path: "text", Before: strings.Repeat("y", 2*RecordMaxBytes)}}
			return r
		}(), "omitted"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := New(0, time.Hour, nil)
			if err != nil {
				t.Fatal(err)
			}
			s.Add(tt.rec)
			got, ok := s.Get(tt.rec.RequestID)
			if !ok {
				t.Fatal("record over the bound not kept at all")
			}
			if !strings.Contains(got.Truncated, tt.want) {
				t.Errorf("truncated = %q, want it to say %q", got.Truncated, tt.want)
			}
			if bytes, _ := s.Usage(); bytes > RecordMaxBytes {
				t.Errorf("record of %d bytes kept, over the bound of %d", bytes, RecordMaxBytes)
			}
			if got.Status != "repaired" || got.Contract != "c" {
				t.Errorf("summary lost: %+v", got)
			}
		})
	}
}

// FuzzDebugStoreRedactText redacts any text under any path: it never
// panics, keeps either the marker or one JSON document (fenced when the
// answer's was), and redacting what it kept changes nothing.
func FuzzDebugStoreRedactText(f *testing.F) {
	user := `{"user":{"email":"a@b.c","id":1}}`
	for _, seed := range []struct{ path, text string }{
		{"/user/email", user},
		{"user.email", `{"data":` + user + `}`},
		{"items[*].name", `[{"items":[{"name":"x"}]}]`},
		{"/a~1b/*", "Sure:\n```json\n{\"a/b\":{\"c\":1}}\n```"},
		{"x", "<think>x</think>\n```\n[1,2]\n```"},
		{"/user/email", `{"user":`},
		{"*", `"scalar"`},
		{"a[", "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]"},
	} {
		f.Add(seed.path, seed.text)
	}
	f.Fuzz(func(t *testing.T, path, text string) {
		s, err := New(0, time.Hour, []string{path})
		if err != nil {
			return
		}
		out := s.redactText(text)
		if text == "" {
			if out != "" {
				t.Fatalf("empty text kept as %q", out)
			}
			return
		}
		if out != redacted {
			body := strings.TrimPrefix(strings.TrimPrefix(out, "```json\n"), "```\n")
			body = strings.TrimSuffix(body, "\n```")
			if _, err := strictjson.Parse([]byte(body)); err != nil {
				t.Fatalf("kept %q: not one JSON document: %v", out, err)
			}
		}
		if again := s.redactText(out); again != out {
			t.Fatalf("redacting %q again gave %q", out, again)
		}
	})
}
