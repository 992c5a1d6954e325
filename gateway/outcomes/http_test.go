package outcomes

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/contractgateway/gateway/middleware/apierr"
)

func sqliteWith(t *testing.T, recs []Record) Store {
	t.Helper()
	s := mustOpen(t, func(ctx context.Context) (Store, error) { return OpenSQLite(ctx, t.TempDir()+"/o.db") })
	if err := s.Write(t.Context(), recs); err != nil {
		t.Fatal(err)
	}
	return s
}

// get calls h for a GET of target and returns what the gateway's one
// error writer would send: the status and the JSON body, from the value or
// from apierr.From of the error.
func get(t *testing.T, h Handler, target string) (int, map[string]any) {
	t.Helper()
	code, raw := http.StatusOK, []byte(nil)
	v, err := h(httptest.NewRequest(http.MethodGet, target, nil))
	if err != nil {
		he := apierr.From(err)
		code, raw = he.Status(), he.Body()
	} else if raw, err = json.Marshal(v); err != nil {
		t.Fatalf("GET %s: %v", target, err)
	}
	var body map[string]any
	if err := json.Unmarshal(raw, &body); err != nil {
		t.Fatalf("GET %s: body %q is not JSON: %v", target, raw, err)
	}
	return code, body
}

func TestHandlersRefuseBadParameters(t *testing.T) {
	s := sqliteWith(t, nil)
	now := func() time.Time { return t0 }
	tests := []struct {
		name   string
		h      Handler
		target string
		param  string
	}{
		{"unknown filter", ListHandler(s), "/admin/outcomes?stauts=failed", "stauts"},
		{"since not RFC 3339", ListHandler(s), "/admin/outcomes?since=yesterday", "since"},
		{"limit zero", ListHandler(s), "/admin/outcomes?limit=0", "limit"},
		{"limit above max", ListHandler(s), "/admin/outcomes?limit=1001", "limit"},
		{"cursor forged", ListHandler(s), "/admin/outcomes?cursor=abc", "cursor"},
		{"since after until", ListHandler(s), "/admin/outcomes?since=2026-01-02T00:00:00Z&until=2026-01-01T00:00:00Z", "since"},
		{"repeated", ListHandler(s), "/admin/outcomes?status=a&status=b", "status"},
		{"by unknown", TrendsHandler(s, now), "/admin/trends?by=route", "by"},
		{"step unknown", TrendsHandler(s, now), "/admin/trends?step=5m", "step"},
		{"until bad", TrendsHandler(s, now), "/admin/trends?until=2026-13-01T00:00:00Z", "until"},
		{"too many buckets", TrendsHandler(s, now), "/admin/trends?step=1m&since=2025-01-01T00:00:00Z", "since"},
		{"unknown trend parameter", TrendsHandler(s, now), "/admin/trends?model=x", "model"},
	}
	for _, tt := range tests {
		code, body := get(t, tt.h, tt.target)
		msg, _ := body["error"].(string)
		if code != http.StatusBadRequest || !strings.HasPrefix(msg, tt.param+":") {
			t.Errorf("%s: GET %s = %d %q, want 400 naming %q", tt.name, tt.target, code, msg, tt.param)
		}
	}
}

// failingStore is a store whose reads fail with an error naming its
// database's address, as a driver's errors do.
type failingStore struct {
	Store
	err error
}

func (f failingStore) List(context.Context, Query) (Page, error)            { return Page{}, f.err }
func (f failingStore) Trends(context.Context, TrendQuery) ([]Series, error) { return nil, f.err }

// TestHandlersHideStoreErrors checks that a store that fails to answer is
// a 503 whose message says nothing of the store's error, while the error
// returned still holds it for the log.
func TestHandlersHideStoreErrors(t *testing.T) {
	cause := errors.New(`failed to connect to host=db.internal user=gateway: dial tcp 10.0.0.5:5432: connection refused`)
	s := failingStore{err: cause}
	now := func() time.Time { return t0 }
	tests := []struct {
		name   string
		h      Handler
		target string
	}{
		{"list", ListHandler(s), "/admin/outcomes"},
		{"trends", TrendsHandler(s, now), "/admin/trends"},
	}
	for _, tt := range tests {
		_, err := tt.h(httptest.NewRequest(http.MethodGet, tt.target, nil))
		he := apierr.From(err)
		if he.Status() != http.StatusServiceUnavailable || strings.Contains(string(he.Body()), "10.0.0.5") || strings.Contains(string(he.Body()), "db.internal") {
			t.Errorf("%s: GET %s = %d %s, want 503 without the store's error", tt.name, tt.target, he.Status(), he.Body())
		}
		if !errors.Is(err, cause) {
			t.Errorf("%s: GET %s returned %v, want the store's error kept for the log", tt.name, tt.target, err)
		}
	}
}

func TestListHandlerPages(t *testing.T) {
	s := sqliteWith(t, sample(5))
	h := ListHandler(s)
	code, body := get(t, h, "/admin/outcomes?limit=3&status=&since="+url.QueryEscape(t0.Format(time.RFC3339)))
	if code != http.StatusOK {
		t.Fatalf("GET = %d %v", code, body)
	}
	list := body["outcomes"].([]any)
	first := list[0].(map[string]any)
	if len(list) != 3 || first["id"] != "req-004" || first["time"] != "2026-03-10T12:04:00Z" || first["key"] != "team-a" {
		t.Errorf("first page = %v", list)
	}
	if _, ok := first["first_text"]; ok {
		t.Errorf("a record without text has first_text: %v", first)
	}
	cursor, _ := body["next_cursor"].(string)
	if cursor == "" {
		t.Fatalf("first page has no next_cursor: %v", body)
	}
	_, body = get(t, h, "/admin/outcomes?limit=3&cursor="+cursor)
	var got []string
	for _, r := range body["outcomes"].([]any) {
		got = append(got, r.(map[string]any)["id"].(string))
	}
	if diff := cmp.Diff([]string{"req-001", "req-000"}, got); diff != "" {
		t.Errorf("second page (-want +got):\n%s", diff)
	}
	if _, ok := body["next_cursor"]; ok {
		t.Errorf("last page has next_cursor: %v", body)
	}
}

func TestTrendsHandler(t *testing.T) {
	s := sqliteWith(t, sample(3))
	h := TrendsHandler(s, func() time.Time { return t0.Add(time.Hour) })
	code, body := get(t, h, "/admin/trends?by=model&step=1m")
	if code != http.StatusOK {
		t.Fatalf("GET = %d %v", code, body)
	}
	b, _ := json.Marshal(body)
	want := `{"by":"model","series":[{"key":"llama3.2","points":[{"n":1,"t":"2026-03-10T12:00:00Z"},{"n":1,"t":"2026-03-10T12:02:00Z"}]},` +
		`{"key":"qwen3","points":[{"n":1,"t":"2026-03-10T12:01:00Z"}]}],"since":"2026-03-09T13:00:00Z","step":"1m","until":"2026-03-10T13:00:00Z"}`
	if diff := cmp.Diff(want, string(b)); diff != "" {
		t.Errorf("trends (-want +got):\n%s", diff)
	}
}

func TestCursorRoundTrip(t *testing.T) {
	tests := []Cursor{
		{Time: t0, ID: "req-1"},
		{Time: t0.Add(123 * time.Microsecond), ID: "id:with:colons"},
		{Time: time.UnixMicro(0).UTC(), ID: ""},
	}
	for _, c := range tests {
		got, err := ParseCursor(c.String())
		if err != nil || !got.Time.Equal(c.Time) || got.ID != c.ID {
			t.Errorf("ParseCursor(%v.String()) = %v, %v; want it back", c, got, err)
		}
	}
}

// FuzzParseQuery checks that no query string makes the parsers panic, and
// that a cursor they accept reads back to itself.
func FuzzParseQuery(f *testing.F) {
	for _, seed := range []string{
		"", "status=failed&contract=mcq@1&model=qwen3&code=SCHEMA_TYPE&limit=50",
		"since=2026-01-02T15:04:05Z&until=2026-01-03T15:04:05.123+02:00",
		"cursor=" + (Cursor{Time: t0, ID: "req-1"}).String(), "cursor=%%%", "cursor=MTIzOg",
		"by=code&step=1d", "step=1m&since=2026-01-01T00:00:00Z&until=2026-01-01T01:00:00Z", "limit=-1", "x=1&x=2",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		v, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		if q, err := ParseQuery(v); err == nil {
			if q.Limit < 0 || q.Limit > MaxLimit {
				t.Errorf("ParseQuery(%q).Limit = %d, outside 0..%d", raw, q.Limit, MaxLimit)
			}
			if q.After != nil {
				back, err := ParseCursor(q.After.String())
				if err != nil || !back.Time.Equal(q.After.Time) || back.ID != q.After.ID {
					t.Errorf("cursor %v does not read back: %v, %v", q.After, back, err)
				}
			}
		}
		if q, _, err := ParseTrendQuery(v, t0); err == nil && !q.Since.Before(q.Until) {
			t.Errorf("ParseTrendQuery(%q): since %v not before until %v", raw, q.Since, q.Until)
		}
		ParseCursor(raw)
	})
}
