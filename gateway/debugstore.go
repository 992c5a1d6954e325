package gateway

import (
	"container/list"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/contractgateway/gateway/middleware"
	"github.com/contractgateway/gateway/repair"
	"github.com/contractgateway/gateway/strictjson"
	"github.com/contractgateway/gateway/validators"
)

// Defaults of the debug store.
const (
	DefaultDebugStoreMaxBytes = 16 << 20
	DefaultDebugStoreTTL      = 15 * time.Minute
)

// redacted replaces a value named by debug_store_redact.
const redacted = "[redacted]"

// debugStore keeps recent guarded requests in memory for GET
// /admin/requests: their first and final texts, reports and corrections.
// It is bounded by bytes (oldest first out) and by TTL, and blanks the
// configured paths before keeping anything.
type debugStore struct {
	maxBytes int64
	ttl      time.Duration
	redact   [][]string

	mu    sync.Mutex
	order *list.List // of *debugEntry, oldest first
	byID  map[string]*list.Element
	bytes int64
}

type debugEntry struct {
	stored time.Time
	size   int64
	rec    DebugRecord
}

// DebugRecord is one request as GET /admin/requests/{id} answers it.
type DebugRecord struct {
	RequestID   string                  `json:"request_id"`
	Time        time.Time               `json:"time"`
	Route       string                  `json:"route"`
	Contract    string                  `json:"contract"`
	Model       string                  `json:"model"`
	Status      string                  `json:"status"`
	First       string                  `json:"first"`
	Final       string                  `json:"final"`
	Before      validators.Report       `json:"before"`
	After       validators.Report       `json:"after"`
	Rungs       []string                `json:"rungs"`
	LLMCalls    int                     `json:"llm_calls"`
	Tokens      repair.Usage            `json:"repair_tokens"`
	Corrections []middleware.Correction `json:"corrections"`
}

// DebugSummary is one row of GET /admin/requests.
type DebugSummary struct {
	RequestID   string    `json:"request_id"`
	Time        time.Time `json:"time"`
	Contract    string    `json:"contract"`
	Model       string    `json:"model"`
	Status      string    `json:"status"`
	CodesBefore []string  `json:"violations_before"`
	CodesAfter  []string  `json:"violations_after"`
}

func newDebugStore(maxBytes int64, ttl time.Duration, redact []string) (*debugStore, error) {
	if maxBytes <= 0 {
		maxBytes = DefaultDebugStoreMaxBytes
	}
	if ttl <= 0 {
		ttl = DefaultDebugStoreTTL
	}
	s := &debugStore{maxBytes: maxBytes, ttl: ttl, order: list.New(), byID: map[string]*list.Element{}}
	for _, p := range redact {
		segs, err := redactPath(p)
		if err != nil {
			return nil, fmt.Errorf("debug_store_redact %q: %w", p, err)
		}
		s.redact = append(s.redact, segs)
	}
	return s, nil
}

// redactPath splits a JSON Pointer or a dotted path into segments.
func redactPath(p string) ([]string, error) {
	if p == "" {
		return nil, fmt.Errorf("empty path")
	}
	if strings.HasPrefix(p, "/") {
		return strictjson.ParsePointer(p)
	}
	return dottedSegments(p), nil
}

// dottedSegments splits "a.b[2].c" into a, b, 2, c.
func dottedSegments(p string) []string {
	var segs []string
	for _, part := range strings.Split(p, ".") {
		for part != "" {
			i := strings.IndexByte(part, '[')
			if i < 0 {
				segs = append(segs, part)
				break
			}
			if i > 0 {
				segs = append(segs, part[:i])
			}
			j := strings.IndexByte(part[i:], ']')
			if j < 0 {
				segs = append(segs, part[i:])
				break
			}
			segs = append(segs, part[i+1:i+j])
			part = part[i+j+1:]
		}
	}
	return segs
}

// covered says whether a value at segs lies at or below a redacted path.
func (s *debugStore) covered(segs []string) bool {
	for _, r := range s.redact {
		if len(segs) < len(r) {
			continue
		}
		match := true
		for i, seg := range r {
			if seg != "*" && seg != segs[i] {
				match = false
				break
			}
		}
		if match {
			return true
		}
	}
	return false
}

// isTextPosition says whether a path is a "line:col" of raw text, which no
// redaction path can name.
func isTextPosition(path string) bool {
	line, col, ok := strings.Cut(path, ":")
	_, e1 := strconv.Atoi(line)
	_, e2 := strconv.Atoi(col)
	return ok && e1 == nil && e2 == nil
}

// blank reports whether the value at a report or correction path must not
// be kept.
func (s *debugStore) blank(path string) bool {
	if len(s.redact) == 0 {
		return false
	}
	return path == "" || isTextPosition(path) || s.covered(dottedSegments(path))
}

// redactText blanks the redacted paths of a JSON text; text that is not
// JSON cannot be redacted by path and is not kept.
func (s *debugStore) redactText(text string) string {
	if len(s.redact) == 0 || text == "" {
		return text
	}
	trimmed := strings.TrimSpace(text)
	fenced := false
	if body, ok := strings.CutPrefix(trimmed, "```json\n"); ok && strings.HasSuffix(body, "\n```") {
		trimmed, fenced = strings.TrimSuffix(body, "\n```"), true
	}
	doc, err := strictjson.Parse([]byte(trimmed))
	if err != nil {
		return redacted
	}
	doc = s.redactValue(doc, nil)
	if fenced {
		return "```json\n" + string(strictjson.MarshalIndent(doc, "  ")) + "\n```"
	}
	return string(strictjson.Marshal(doc))
}

func (s *debugStore) redactValue(v *strictjson.Value, segs []string) *strictjson.Value {
	if len(segs) > 0 && s.covered(segs) {
		return strictjson.String(redacted)
	}
	switch v.Kind {
	case strictjson.KindObject:
		out := *v
		out.Members = make([]strictjson.Member, len(v.Members))
		for i, m := range v.Members {
			m.Value = s.redactValue(m.Value, append(segs[:len(segs):len(segs)], m.Key))
			out.Members[i] = m
		}
		return &out
	case strictjson.KindArray:
		out := *v
		out.Items = make([]*strictjson.Value, len(v.Items))
		for i, it := range v.Items {
			out.Items[i] = s.redactValue(it, append(segs[:len(segs):len(segs)], strconv.Itoa(i)))
		}
		return &out
	}
	return v
}

func (s *debugStore) redactReport(r validators.Report) validators.Report {
	if len(s.redact) == 0 {
		return r
	}
	out := r
	out.Violations = make([]validators.Violation, len(r.Violations))
	for i, v := range r.Violations {
		if s.blank(v.Path) {
			v.Actual, v.Expected, v.Fix = redacted, redacted, nil
		}
		out.Violations[i] = v
	}
	return out
}

// add keeps one request (GuardConfig.Record).
func (s *debugStore) add(r middleware.Record) {
	rec := DebugRecord{RequestID: r.RequestID, Time: r.Time.UTC(), Route: r.Route, Contract: r.Contract, Model: r.Model,
		Status: r.Status, First: s.redactText(r.First), Final: s.redactText(r.Final),
		Before: s.redactReport(r.Before), After: s.redactReport(r.After), Corrections: []middleware.Correction{}}
	if r.Outcome != nil {
		rec.Rungs, rec.LLMCalls, rec.Tokens = r.Outcome.Rungs, r.Outcome.LLMCalls, r.Outcome.Tokens
	}
	for _, c := range r.Corrections {
		if s.blank(c.Path) {
			c.Before, c.After = redacted, redacted
		}
		rec.Corrections = append(rec.Corrections, c)
	}
	if rec.RequestID == "" {
		return
	}
	b, err := json.Marshal(rec)
	if err != nil || int64(len(b)) > s.maxBytes {
		return
	}
	size := int64(len(b))
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if el, ok := s.byID[rec.RequestID]; ok {
		s.remove(el)
	}
	s.expire(now)
	for s.bytes+size > s.maxBytes && s.order.Len() > 0 {
		s.remove(s.order.Front())
	}
	s.byID[rec.RequestID] = s.order.PushBack(&debugEntry{stored: now, size: size, rec: rec})
	s.bytes += size
}

func (s *debugStore) remove(el *list.Element) {
	e := s.order.Remove(el).(*debugEntry)
	delete(s.byID, e.rec.RequestID)
	s.bytes -= e.size
}

// expire drops the entries older than the TTL; the list is in store order.
func (s *debugStore) expire(now time.Time) {
	for el := s.order.Front(); el != nil; el = s.order.Front() {
		if now.Sub(el.Value.(*debugEntry).stored) < s.ttl {
			return
		}
		s.remove(el)
	}
}

func (s *debugStore) get(id string) (DebugRecord, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expire(time.Now())
	el, ok := s.byID[id]
	if !ok {
		return DebugRecord{}, false
	}
	return el.Value.(*debugEntry).rec, true
}

// list returns the kept requests, newest first, that match the filters
// ("" matches any).
func (s *debugStore) list(status, model, contract string, limit int) []DebugSummary {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expire(time.Now())
	out := []DebugSummary{}
	for el := s.order.Back(); el != nil && len(out) < limit; el = el.Prev() {
		r := el.Value.(*debugEntry).rec
		if (status != "" && r.Status != status) || (model != "" && r.Model != model) || (contract != "" && r.Contract != contract) {
			continue
		}
		out = append(out, DebugSummary{RequestID: r.RequestID, Time: r.Time, Contract: r.Contract, Model: r.Model,
			Status: r.Status, CodesBefore: r.Before.Codes(), CodesAfter: r.After.Codes()})
	}
	return out
}

// usage is the store's bytes and entries.
func (s *debugStore) usage() (int64, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.bytes, s.order.Len()
}

// debugRoutes registers GET /admin/requests (?status=&model=&contract=&limit=)
// and GET /admin/requests/:id.
func debugRoutes(g *echo.Group, s *debugStore) {
	g.GET("/admin/requests", func(c echo.Context) error {
		limit := 100
		if l := c.QueryParam("limit"); l != "" {
			n, err := strconv.Atoi(l)
			if err != nil || n <= 0 {
				return &HTTPError{Code: http.StatusBadRequest, Msg: "limit: want a positive integer"}
			}
			limit = n
		}
		return c.JSON(http.StatusOK, map[string]any{
			"requests": s.list(c.QueryParam("status"), c.QueryParam("model"), c.QueryParam("contract"), limit)})
	})
	g.GET("/admin/requests/:id", func(c echo.Context) error {
		rec, ok := s.get(c.Param("id"))
		if !ok {
			return &HTTPError{Code: http.StatusNotFound, Msg: fmt.Sprintf("request %q is not in the debug store (expired, evicted or never kept)", c.Param("id"))}
		}
		return c.JSON(http.StatusOK, rec)
	})
}
