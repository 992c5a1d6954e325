// Package debugstore keeps recent guarded requests in memory, redacted
// and bounded, for the admin routes /admin/requests and
// /admin/requests/{id}: the first and final texts of each, its reports and
// its corrections, so that an operator can see what a model answered and
// what the ladder made of it.
package debugstore

import (
	"container/list"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/contractgateway/gateway/middleware"
	"github.com/contractgateway/gateway/middleware/apierr"
	"github.com/contractgateway/gateway/repair"
	"github.com/contractgateway/gateway/validators"
	"github.com/contractgateway/gateway/validators/strictjson"
)

// Defaults and bounds of the debug store.
const (
	// DefaultMaxBytes and DefaultTTL bound the store when the config's
	// debug_store_max_bytes and debug_store_ttl are zero.
	DefaultMaxBytes = 16 << 20
	DefaultTTL      = 15 * time.Minute

	// RecordMaxBytes bounds one request's record (its JSON), so that
	// one answer cannot take the store, nor its memory while it is kept.
	// A record over it keeps its first and final texts cut to a quarter of
	// the bound each; a record still over it keeps only its summary (ids,
	// status, rungs, calls and the first violation codes), and Truncated
	// says what was cut. When the store itself is smaller, its size is the
	// bound.
	RecordMaxBytes = 1 << 20

	// MaxDepth bounds the nesting of a document the store rewrites to
	// redact it: values nested deeper are replaced by a marker. Contract
	// documents are a few levels deep; a 10,000-level answer would
	// otherwise be walked and copied level by level.
	MaxDepth = 64
)

// redacted replaces a value named by debug_store_redact.
const redacted = "[redacted]"

// tooDeep replaces a value nested deeper than MaxDepth.
var tooDeep = "[omitted: nested deeper than " + strconv.Itoa(MaxDepth) + " levels]"

// Store keeps recent guarded requests in memory for GET
// /admin/requests: their first and final texts, reports and corrections.
// It is bounded by bytes (oldest first out), per record
// (RecordMaxBytes) and by TTL, and blanks the configured paths before
// keeping anything.
//
// A record is never replaced by another request's: a guarded request whose
// X-Request-Id is already kept, or in flight, is given a fresh id
// (OwnIDs), so that the id each client got back opens its own record.
type Store struct {
	maxBytes int64
	ttl      time.Duration
	redact   [][]string
	// maxSegs is the number of leading path segments that decide whether
	// a value is redacted: the longest path plus the two segments a
	// wrapper and an array index add (covered).
	maxSegs int

	mu    sync.Mutex
	order *list.List // of *entry, oldest first
	// byID holds the newest entry of each id. Two entries share an id only
	// when a record lands after its request has ended (a coalesced run
	// whose first client left) and the id was given out again meanwhile.
	byID map[string]*list.Element
	// inFlight holds the ids of guarded requests being answered.
	inFlight map[string]bool
	bytes    int64
}

type entry struct {
	stored time.Time
	size   int64
	rec    Record
}

// Record is one request as GET /admin/requests/{id} answers it.
type Record struct {
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
	// Truncated, when not empty, says what of the record was cut to keep
	// it within RecordMaxBytes.
	Truncated string `json:"truncated,omitempty"`
}

// Summary is one row of GET /admin/requests.
type Summary struct {
	RequestID   string    `json:"request_id"`
	Time        time.Time `json:"time"`
	Contract    string    `json:"contract"`
	Model       string    `json:"model"`
	Status      string    `json:"status"`
	CodesBefore []string  `json:"violations_before"`
	CodesAfter  []string  `json:"violations_after"`
}

// New returns a store of at most maxBytes (0: DefaultMaxBytes) whose
// records live ttl (0: DefaultTTL), blanking the redact paths (JSON
// Pointers or dotted paths with [*]); a bad path is an error.
func New(maxBytes int64, ttl time.Duration, redact []string) (*Store, error) {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxBytes
	}
	if ttl <= 0 {
		ttl = DefaultTTL
	}
	s := &Store{maxBytes: maxBytes, ttl: ttl, order: list.New(), byID: map[string]*list.Element{},
		inFlight: map[string]bool{}}
	for _, p := range redact {
		segs, err := redactPath(p)
		if err != nil {
			return nil, fmt.Errorf("debug_store_redact %q: %w", p, err)
		}
		s.redact = append(s.redact, segs)
		s.maxSegs = max(s.maxSegs, len(segs)+2)
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
// A path names a value of the answer's document wherever the document
// sits in the answer, as the contract's shape rules find it: at the root,
// under a top-level wrapper member ({"data": …}: any member, so every
// contract's unwrap keys are among them), in each element of a top-level
// array, and in each element of a wrapped array ({"data": [ … ]}). Only the
// first maxSegs segments can decide it.
func (s *Store) covered(segs []string) bool {
	for _, r := range s.redact {
		for off := 0; off <= 2; off++ {
			if len(segs) < off+len(r) {
				break
			}
			if off == 2 && !isIndex(segs[1]) {
				break
			}
			if matchPath(r, segs[off:off+len(r)]) {
				return true
			}
		}
	}
	return false
}

func matchPath(pattern, segs []string) bool {
	for i, seg := range pattern {
		if seg != "*" && seg != segs[i] {
			return false
		}
	}
	return true
}

func isIndex(seg string) bool {
	if seg == "" {
		return false
	}
	for i := 0; i < len(seg); i++ {
		if seg[i] < '0' || seg[i] > '9' {
			return false
		}
	}
	return true
}

// isTextPosition says whether a path is a "line:col" of raw text, which no
// redaction path can name.
func isTextPosition(path string) bool {
	line, col, ok := strings.Cut(path, ":")
	_, e1 := strconv.Atoi(line)
	_, e2 := strconv.Atoi(col)
	return ok && e1 == nil && e2 == nil
}

// segments returns the leading segments of a report or correction path
// that decide redaction (pointer preferred: a dotted path cannot say a
// key holds a dot), and whether the path names the whole text: the
// document itself ("") or a position in the raw text, where every value
// must be blanked.
func (s *Store) segments(dotted, pointer string) (segs []string, whole bool) {
	switch {
	case pointer != "":
		p, err := strictjson.ParsePointer(pointer)
		if err != nil {
			return nil, true
		}
		segs = p
	case dotted == "" || isTextPosition(dotted):
		return nil, true
	default:
		segs = dottedSegments(dotted)
	}
	return segs[:min(len(segs), s.maxSegs)], false
}

// redactText blanks the redacted paths of the JSON document in a model's
// text, found as the guard finds it (think sections dropped, one fenced
// block or the bare text, validators.Extract). What lies around the
// document (prose, think sections) cannot be redacted by path and is not
// kept; text without a parseable document is not kept at all.
func (s *Store) redactText(text string) string {
	if len(s.redact) == 0 || text == "" {
		return text
	}
	ex, vio := validators.Extract(text)
	if vio != nil {
		return redacted
	}
	doc, err := strictjson.ParseString(ex.Text)
	if err != nil {
		return redacted
	}
	out := string(strictjson.Marshal(s.redactValue(doc, nil, 0)))
	switch ex.Source {
	case validators.SourceFenceJSON:
		return "```json\n" + out + "\n```"
	case validators.SourceFencePlain:
		return "```\n" + out + "\n```"
	}
	return out
}

// redactValue returns a copy of v, found at segs, with the covered values
// blanked and the values nested deeper than MaxDepth below v replaced
// by a marker, so that the walk (recursive) is at most MaxDepth deep
// whatever the document. v itself is not changed: a parsed value may be
// shared.
func (s *Store) redactValue(v *strictjson.Value, segs []string, depth int) *strictjson.Value {
	if len(segs) > 0 && s.covered(segs) {
		return strictjson.String(redacted)
	}
	if v.Kind != strictjson.KindObject && v.Kind != strictjson.KindArray {
		return v
	}
	if depth >= MaxDepth {
		return strictjson.String(tooDeep)
	}
	// Below maxSegs segments nothing more can be covered: the path stops
	// growing, so a long path costs nothing per level.
	child := func(seg string) []string {
		if len(segs) >= s.maxSegs {
			return segs
		}
		return append(segs[:len(segs):len(segs)], seg)
	}
	out := *v
	if v.Kind == strictjson.KindObject {
		out.Members = make([]strictjson.Member, len(v.Members))
		for i, m := range v.Members {
			m.Value = s.redactValue(m.Value, child(m.Key), depth+1)
			out.Members[i] = m
		}
		return &out
	}
	out.Items = make([]*strictjson.Value, len(v.Items))
	for i, it := range v.Items {
		out.Items[i] = s.redactValue(it, child(strconv.Itoa(i)), depth+1)
	}
	return &out
}

// redactAt returns x, a value found at segs (a violation's actual or
// expected value, a correction's before or after), with its covered parts
// blanked: a covered value whole, an object or array member by member.
func (s *Store) redactAt(x any, segs []string) any {
	if s.covered(segs) {
		return redacted
	}
	switch x.(type) {
	case nil, string, bool, float64, int, int64:
		return x
	}
	b, err := json.Marshal(x)
	if err != nil {
		return redacted
	}
	doc, err := strictjson.Parse(b)
	if err != nil {
		return redacted
	}
	if doc.Kind != strictjson.KindObject && doc.Kind != strictjson.KindArray {
		return x
	}
	return json.RawMessage(strictjson.Marshal(s.redactValue(doc, segs, 0)))
}

func (s *Store) redactReport(r validators.Report) validators.Report {
	if len(s.redact) == 0 {
		return r
	}
	out := r
	out.Violations = make([]validators.Violation, len(r.Violations))
	for i, v := range r.Violations {
		segs, whole := s.segments(v.Path, v.Pointer)
		if whole || s.covered(segs) {
			// A hint may quote the value it is about.
			v.Actual, v.Expected, v.Hint, v.Fix = redacted, redacted, redacted, nil
		} else {
			v.Actual, v.Expected = s.redactAt(v.Actual, segs), s.redactAt(v.Expected, segs)
			if v.Fix != nil {
				fix := *v.Fix
				fsegs, fwhole := s.segments("", fix.Path)
				if fwhole || s.covered(fsegs) {
					fix.Value = json.RawMessage(strconv.Quote(redacted))
				} else if fix.Value != nil {
					if b, err := json.Marshal(s.redactAt(fix.Value, fsegs)); err == nil {
						fix.Value = b
					}
				}
				v.Fix = &fix
			}
		}
		out.Violations[i] = v
	}
	return out
}

func (s *Store) redactCorrection(c middleware.Correction) middleware.Correction {
	if len(s.redact) == 0 {
		return c
	}
	segs, whole := s.segments(c.Path, "")
	if whole || s.covered(segs) {
		c.Before, c.After = redacted, redacted
		return c
	}
	c.Before, c.After = s.redactAt(c.Before, segs), s.redactAt(c.After, segs)
	return c
}

// Add keeps one request (GuardConfig.Record). It never replaces another
// request's record (see byID).
func (s *Store) Add(r middleware.Record) {
	if r.RequestID == "" {
		return
	}
	rec := Record{RequestID: r.RequestID, Time: r.Time.UTC(), Route: r.Route, Contract: r.Contract, Model: r.Model,
		Status: r.Status, First: s.redactText(r.First), Final: s.redactText(r.Final),
		Before: s.redactReport(r.Before), After: s.redactReport(r.After), Corrections: []middleware.Correction{}}
	if r.Outcome != nil {
		rec.Rungs, rec.LLMCalls, rec.Tokens = r.Outcome.Rungs, r.Outcome.LLMCalls, r.Outcome.Tokens
	}
	for _, c := range r.Corrections {
		rec.Corrections = append(rec.Corrections, s.redactCorrection(c))
	}
	rec, size, ok := s.bound(rec)
	if !ok {
		return
	}
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expire(now)
	for s.bytes+size > s.maxBytes && s.order.Len() > 0 {
		s.remove(s.order.Front())
	}
	s.byID[rec.RequestID] = s.order.PushBack(&entry{stored: now, size: size, rec: rec})
	s.bytes += size
}

// Bounds of a record cut to its summary.
const (
	summaryViolations = 100 // violations kept of each report
	summaryString     = 256 // bytes kept of a path, model or route
)

// bound returns rec within the per-record bound (RecordMaxBytes or
// the store's size), with its size; false when not even its summary fits
// the store.
func (s *Store) bound(rec Record) (Record, int64, bool) {
	limit := min(int64(RecordMaxBytes), s.maxBytes)
	b, err := json.Marshal(rec)
	if err != nil {
		return rec, 0, false
	}
	full := len(b)
	if int64(full) > limit {
		rec.First, rec.Final = clip(rec.First, int(limit/4)), clip(rec.Final, int(limit/4))
		rec.Truncated = fmt.Sprintf("record of %d bytes over the bound of %d: first and final texts cut", full, limit)
		if b, err = json.Marshal(rec); err != nil {
			return rec, 0, false
		}
	}
	if int64(len(b)) > limit {
		rec = summary(rec)
		rec.Truncated = fmt.Sprintf("record of %d bytes over the bound of %d: texts, violation details and corrections omitted", full, limit)
		if b, err = json.Marshal(rec); err != nil {
			return rec, 0, false
		}
	}
	return rec, int64(len(b)), int64(len(b)) <= s.maxBytes
}

// summary is rec without its texts, corrections and violation details.
func summary(rec Record) Record {
	out := Record{RequestID: rec.RequestID, Time: rec.Time, Route: clip(rec.Route, summaryString),
		Contract: clip(rec.Contract, summaryString), Model: clip(rec.Model, summaryString), Status: rec.Status,
		Before: summaryReport(rec.Before), After: summaryReport(rec.After), Rungs: rec.Rungs,
		LLMCalls: rec.LLMCalls, Tokens: rec.Tokens, Corrections: []middleware.Correction{}}
	if len(out.Rungs) > summaryViolations {
		out.Rungs = out.Rungs[:summaryViolations]
	}
	return out
}

func summaryReport(r validators.Report) validators.Report {
	out := validators.Report{Contract: clip(r.Contract, summaryString), Valid: r.Valid, RepairType: r.RepairType,
		Violations: []validators.Violation{}}
	for _, v := range r.Violations[:min(len(r.Violations), summaryViolations)] {
		out.Violations = append(out.Violations, validators.Violation{Class: v.Class, Code: clip(v.Code, summaryString),
			Severity: v.Severity, Path: clip(v.Path, summaryString)})
	}
	return out
}

// clip cuts s to at most n bytes, on a character boundary, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	mark := fmt.Sprintf("…[cut: %d bytes in all]", len(s))
	keep := max(0, n-len(mark))
	for keep > 0 && !utf8.RuneStart(s[keep]) {
		keep--
	}
	return s[:keep] + mark
}

func (s *Store) remove(el *list.Element) {
	e := s.order.Remove(el).(*entry)
	if s.byID[e.rec.RequestID] == el {
		delete(s.byID, e.rec.RequestID)
	}
	s.bytes -= e.size
}

// expire drops the entries older than the TTL; the list is in store order.
func (s *Store) expire(now time.Time) {
	for el := s.order.Front(); el != nil; el = s.order.Front() {
		if now.Sub(el.Value.(*entry).stored) < s.ttl {
			return
		}
		s.remove(el)
	}
}

// claim returns the id a guarded request is kept under: id itself when no
// kept record and no request in flight has it, a fresh one otherwise. The
// id stays taken until release is called.
func (s *Store) claim(id string) (string, func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expire(time.Now())
	for id == "" || s.byID[id] != nil || s.inFlight[id] {
		id = middleware.NewRequestID()
	}
	s.inFlight[id] = true
	return id, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		delete(s.inFlight, id)
	}
}

// OwnIDs wraps the guard so that each guarded request has an id of its
// own in the store: a client that reuses an X-Request-Id already kept, or
// in flight, gets a fresh one back in X-Request-Id (and the upstream and
// the logs see that one), instead of its record replacing another
// request's or opening under another request's id.
func (s *Store) OwnIDs(guard echo.MiddlewareFunc) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		h := guard(next)
		return func(c echo.Context) error {
			sent := c.Response().Header().Get(echo.HeaderXRequestID)
			id, release := s.claim(sent)
			defer release()
			if id != sent {
				c.Response().Header().Set(echo.HeaderXRequestID, id)
				c.Request().Header.Set(echo.HeaderXRequestID, id)
			}
			return h(c)
		}
	}
}

// Get returns the newest record kept under id.
func (s *Store) Get(id string) (Record, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expire(time.Now())
	el, ok := s.byID[id]
	if !ok {
		return Record{}, false
	}
	return el.Value.(*entry).rec, true
}

// List returns the kept requests, newest first, that match the filters
// ("" matches any).
func (s *Store) List(status, model, contract string, limit int) []Summary {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expire(time.Now())
	out := []Summary{}
	for el := s.order.Back(); el != nil && len(out) < limit; el = el.Prev() {
		r := el.Value.(*entry).rec
		if (status != "" && r.Status != status) || (model != "" && r.Model != model) || (contract != "" && r.Contract != contract) {
			continue
		}
		out = append(out, Summary{RequestID: r.RequestID, Time: r.Time, Contract: r.Contract, Model: r.Model,
			Status: r.Status, CodesBefore: r.Before.Codes(), CodesAfter: r.After.Codes()})
	}
	return out
}

// Usage is the store's bytes and entries.
func (s *Store) Usage() (int64, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.bytes, s.order.Len()
}

// Routes registers GET /admin/requests (?status=&model=&contract=&limit=)
// and GET /admin/requests/{id}.
func Routes(g *echo.Group, s *Store) {
	g.GET("/admin/requests", func(c echo.Context) error {
		limit := 100
		if l := c.QueryParam("limit"); l != "" {
			n, err := strconv.Atoi(l)
			if err != nil || n <= 0 {
				return &apierr.Error{Code: http.StatusBadRequest, Msg: "limit: want a positive integer"}
			}
			limit = n
		}
		return c.JSON(http.StatusOK, map[string]any{
			"requests": s.List(c.QueryParam("status"), c.QueryParam("model"), c.QueryParam("contract"), limit)})
	})
	// The id is the rest of the path, so that an id with "/" opens whether
	// the client escaped it (the dashboard's encodeURIComponent) or not.
	g.GET("/admin/requests/*", func(c echo.Context) error {
		id, err := pathRest(c)
		if err != nil {
			return &apierr.Error{Code: http.StatusBadRequest, Msg: "request id: " + err.Error(), Err: err}
		}
		rec, ok := s.Get(id)
		if !ok {
			return &apierr.Error{Code: http.StatusNotFound, Msg: fmt.Sprintf("request %q is not in the debug store (expired, evicted or never kept)", id)}
		}
		return c.JSON(http.StatusOK, rec)
	})
}

// pathRest is the decoded rest of the path matched by a route's "*". Echo
// routes on the escaped path when the request's differs from the default
// escaping (%3A, %2F, %2B, %3D), and its parameters are then still escaped;
// otherwise they are already decoded and must not be decoded twice.
func pathRest(c echo.Context) (string, error) {
	rest := c.Param("*")
	if c.Request().URL.RawPath == "" {
		return rest, nil
	}
	return url.PathUnescape(rest)
}
