package pool

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/contractgateway/gateway/middleware/apierr"
	"github.com/contractgateway/gateway/middleware/codec/frame"
	"github.com/contractgateway/gateway/middleware/upstream"
)

// aggregate is a request a pool of several answers from every member.
type aggregateKind int

const (
	aggNone    aggregateKind = iota
	aggTags                  // GET /api/tags: {"models": [...]}, the union
	aggPS                    // GET /api/ps: the union
	aggOpenAI                // GET /v1/models: {"data": [...]}, the union
	aggVersion               // GET /api/version: the lowest
)

func aggregateOf(method, path string) aggregateKind {
	if method != http.MethodGet {
		return aggNone
	}
	switch strings.TrimSuffix(path, "/") {
	case "/api/tags":
		return aggTags
	case "/api/ps":
		return aggPS
	case "/v1/models":
		return aggOpenAI
	case "/api/version":
		return aggVersion
	}
	return aggNone
}

// live lists the members worth asking: healthy and not behind an open
// breaker, or, when there is none, every member (the answer then says
// why they failed).
func (p *Pool) live() []*member {
	var out []*member
	for i, c := range p.candidates("") {
		if c.Healthy && !c.Open {
			out = append(out, p.members[i])
		}
	}
	if len(out) == 0 {
		return p.members
	}
	return out
}

// result is one member's answer to a request every member is asked.
type result struct {
	m     *member
	reply upstream.Reply
	err   error
}

// MaxMemberAnswerBytes bounds what the pool reads of a member's answer
// to keep it: the whole of a health check's /api/version, /api/tags and
// /api/ps, of the listings and versions it unites for clients, of a blob's
// answer, and each line of the answer to a request it fans out (pull,
// create, copy, delete). Ollama's largest, the /api/tags of a few hundred
// models, is under a megabyte; a member that answers more is broken or
// hostile, and is left out of the union, or is a failed member of the
// fan-out, with one log line — its answer is never buffered past the
// bound, so that a few listings asked at once cannot exhaust the
// gateway's memory.
const MaxMemberAnswerBytes = 16 << 20

// each sends a copy of req to every member of ms at once and returns
// their answers, in ms's order: read whole, at most MaxMemberAnswerBytes,
// or, for a request fanned out (lines), read by fanOutLines.
func (p *Pool) each(req *http.Request, ms []*member, body []byte, lines bool) []result {
	out := make([]result, len(ms))
	var wg sync.WaitGroup
	for i, m := range ms {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var r io.Reader
			if body != nil {
				r = bytes.NewReader(body)
			}
			one, err := http.NewRequestWithContext(req.Context(), req.Method, req.URL.String(), r)
			if err != nil {
				out[i] = result{m: m, err: err}
				return
			}
			one.Header = req.Header.Clone()
			var reply upstream.Reply
			if lines {
				reply, err = upstream.SendWith(memberDoer{m}, one, 0, fanOutLines)
			} else {
				reply, err = upstream.Send(memberDoer{m}, one, MaxMemberAnswerBytes)
			}
			p.noteSize(m, err)
			out[i] = result{m: m, reply: reply, err: err}
		}()
	}
	wg.Wait()
	return out
}

// noteSize logs a member's answer over MaxMemberAnswerBytes, once until
// the member answers within the bound again, and counts it among the
// member's errors.
func (p *Pool) noteSize(m *member, err error) {
	switch {
	case errors.Is(err, upstream.ErrTooLarge):
		m.failures.Add(1)
		if m.oversize.CompareAndSwap(false, true) {
			p.log.Warn("upstream answer over the pool's bound: the upstream is left out of what the pool answers, its answer not read further",
				"upstream", m.name, "max_bytes", MaxMemberAnswerBytes)
		}
	case err == nil:
		m.oversize.Store(false)
	}
}

// fanOutLines reads a member's answer to a fanned-out request line by
// line, no line longer than MaxMemberAnswerBytes, and keeps what
// fanOutResult needs of it: the first line that carries an error, else
// the last line (a non-streamed answer's one object, a stream's last
// status). The progress lines of a pull — one every 60ms, hours of them
// for a large model — pass without being kept: a bound on the whole
// answer would cut a slow but sound pull, a bound on each line holds
// every member to a few megabytes.
func fanOutLines(s *upstream.Stream) ([]byte, error) {
	sc := bufio.NewScanner(s)
	sc.Buffer(make([]byte, 0, 4<<10), MaxMemberAnswerBytes)
	var last, failed []byte
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		last = append(last[:0], line...)
		if failed == nil && bytes.Contains(line, []byte(`"error"`)) {
			var v struct {
				Error string `json:"error"`
			}
			if json.Unmarshal(line, &v) == nil && v.Error != "" {
				failed = bytes.Clone(line)
			}
		}
	}
	if errors.Is(sc.Err(), bufio.ErrTooLong) {
		return nil, upstream.TooLarge(MaxMemberAnswerBytes)
	}
	if failed != nil {
		return failed, sc.Err()
	}
	return last, sc.Err()
}

type memberDoer struct{ m *member }

func (d memberDoer) Do(req *http.Request) (*http.Response, error) { return d.m.roundTrip(req) }

// aggregate answers a listing or the version from every live member: the
// union of their lists, each model once (the first member's entry), or
// the lowest version. Members that fail are left out; when all fail, the
// first one's error is the answer.
func (p *Pool) aggregate(req *http.Request, kind aggregateKind) (*http.Response, error) {
	if req.Body != nil {
		req.Body.Close()
	}
	var ok []result
	var firstErr error
	for _, r := range p.each(req, p.live(), nil, false) {
		if r.err != nil {
			firstErr = cmpErr(firstErr, r.err)
			continue
		}
		ok = append(ok, r)
	}
	if len(ok) == 0 {
		return nil, firstErr
	}
	bodies := make([][]byte, len(ok))
	for i, r := range ok {
		bodies[i] = r.reply.Body
	}
	var body []byte
	var err error
	switch kind {
	case aggVersion:
		body, err = lowestVersion(bodies)
	case aggOpenAI:
		body, err = union(bodies, "data", "id")
	default:
		body, err = union(bodies, "models", "name")
	}
	if err != nil {
		return nil, &apierr.Error{Code: http.StatusBadGateway, Msg: "upstream answer unreadable", Err: err}
	}
	h := ok[0].reply.Header.Clone()
	h.Del("Content-Length")
	return synthetic(req, http.StatusOK, h, body), nil
}

func cmpErr(first, err error) error {
	if first == nil {
		return err
	}
	return first
}

// synthetic is an answer the pool made itself.
func synthetic(req *http.Request, code int, h http.Header, body []byte) *http.Response {
	if h == nil {
		h = http.Header{}
	}
	h.Del("Content-Length")
	if h.Get("Content-Type") == "" {
		h.Set("Content-Type", "application/json; charset=utf-8")
	}
	return &http.Response{StatusCode: code, Status: fmt.Sprintf("%d %s", code, http.StatusText(code)),
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, Header: h, Request: req,
		Body: io.NopCloser(bytes.NewReader(body)), ContentLength: int64(len(body))}
}

// union merges the lists of bodies (objects whose member array holds
// entries named by key): every entry once, by model name as Ollama
// matches names, the first body's entry first. The first body's other
// members are kept.
func union(bodies [][]byte, array, key string) ([]byte, error) {
	var out map[string]json.RawMessage
	seen := map[string]bool{}
	items := []json.RawMessage{}
	for i, b := range bodies {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(b, &obj); err != nil {
			return nil, err
		}
		if i == 0 {
			out = obj
		}
		var list []json.RawMessage
		if raw, ok := obj[array]; ok && string(raw) != "null" {
			if err := json.Unmarshal(raw, &list); err != nil {
				return nil, err
			}
		}
		for _, it := range list {
			var named map[string]json.RawMessage
			var name string
			if json.Unmarshal(it, &named) == nil {
				_ = json.Unmarshal(named[key], &name)
			}
			k := upstream.ModelKey(name)
			if name != "" && seen[k] {
				continue
			}
			seen[k] = true
			items = append(items, it)
		}
	}
	if out == nil {
		out = map[string]json.RawMessage{} // the first body was null
	}
	list, _ := json.Marshal(items)
	out[array] = list
	return json.Marshal(out)
}

// lowestVersion answers the lowest of the members' versions: a client
// that checks for a feature must find it on whichever member serves it.
func lowestVersion(bodies [][]byte) ([]byte, error) {
	best := ""
	var bestBody []byte
	for _, b := range bodies {
		var v struct {
			Version string `json:"version"`
		}
		if err := json.Unmarshal(b, &v); err != nil {
			return nil, err
		}
		if bestBody == nil || compareVersions(v.Version, best) < 0 {
			best, bestBody = v.Version, b
		}
	}
	return bestBody, nil
}

// compareVersions compares dotted versions ("0.17.4", "0.6.10-rc1")
// number by number; a pre-release is lower than its release.
func compareVersions(a, b string) int {
	a, b = strings.TrimPrefix(a, "v"), strings.TrimPrefix(b, "v")
	an, apre, _ := strings.Cut(a, "-")
	bn, bpre, _ := strings.Cut(b, "-")
	as, bs := strings.Split(an, "."), strings.Split(bn, ".")
	for i := 0; i < max(len(as), len(bs)); i++ {
		var x, y int
		if i < len(as) {
			x, _ = strconv.Atoi(as[i])
		}
		if i < len(bs) {
			y, _ = strconv.Atoi(bs[i])
		}
		if c := cmp.Compare(x, y); c != 0 {
			return c
		}
	}
	switch {
	case apre == bpre:
		return 0
	case apre == "":
		return 1
	case bpre == "":
		return -1
	}
	return strings.Compare(apre, bpre)
}

// fanOutOf names the model management requests that reach every member.
func fanOutOf(method, path string) string {
	p := strings.TrimSuffix(path, "/")
	switch {
	case method == http.MethodPost && (p == "/api/pull" || p == "/api/create" || p == "/api/copy"):
		return strings.TrimPrefix(p, "/api/")
	case method == http.MethodDelete && p == "/api/delete":
		return "delete"
	}
	return ""
}

// fanOut sends a model management request (pull, create, copy, delete) to
// every member, so that a model pulled through the gateway is servable
// from each of them, and answers once all have: success when every
// member succeeded (for copy and delete, a member without the model does
// not count), else an error in Ollama's shape naming each member that
// failed and why. A streamed pull or create answers one progress line per
// member as it finishes, then Ollama's last line: {"status":"success"} or
// {"error": …}.
func (p *Pool) fanOut(req *http.Request, kind string) (*http.Response, error) {
	var body []byte
	if req.GetBody != nil {
		rc, err := req.GetBody()
		if err != nil {
			return nil, err
		}
		body, _ = io.ReadAll(rc)
	}
	if req.Body != nil {
		req.Body.Close()
	}
	stream := (kind == "pull" || kind == "create") && streamed(body)
	if !stream {
		return p.fanOutResult(req, kind, p.each(req, p.members, body, true))
	}
	pr, pw := io.Pipe()
	go func() {
		results := make(chan result, len(p.members))
		var wg sync.WaitGroup
		for _, m := range p.members {
			wg.Add(1)
			go func() {
				defer wg.Done()
				results <- p.each(req, []*member{m}, body, true)[0]
			}()
		}
		go func() { wg.Wait(); close(results) }()
		var all []result
		enc := json.NewEncoder(pw)
		for r := range results {
			all = append(all, r)
			status := r.m.shown() + ": success"
			if err := memberFailure(kind, r); err != nil {
				status = r.m.shown() + ": failed: " + apierr.From(err).Message()
			}
			_ = enc.Encode(map[string]string{"status": status})
		}
		if _, err := p.fanOutResult(req, kind, all); err != nil {
			// The stream has begun: its error is the one error type's
			// body as its last line, as the one writer ends a stream.
			_, _ = pw.Write(frame.NDJSONErrorLine(apierr.From(err).Body()))
		} else {
			_ = enc.Encode(map[string]string{"status": "success"})
		}
		pw.Close()
	}()
	h := http.Header{"Content-Type": {"application/x-ndjson"}}
	resp := synthetic(req, http.StatusOK, h, nil)
	resp.Body, resp.ContentLength = pr, -1
	return resp, nil
}

// shown is how a client's answer names m: its URL with any password
// masked, since the URL of an upstream may carry one.
func (m *member) shown() string { return m.base.Redacted() }

// streamed reads a pull's or create's "stream" member: true unless it
// says false.
func streamed(body []byte) bool {
	var v struct {
		Stream *bool `json:"stream"`
	}
	if json.Unmarshal(body, &v) != nil || v.Stream == nil {
		return true
	}
	return *v.Stream
}

// memberFailure is a member's failure of a fanned-out request, nil when
// it succeeded: an error status, or an error line in a streamed answer. A
// copy or delete of a model the member does not have is no failure.
func memberFailure(kind string, r result) error {
	if r.err != nil {
		if (kind == "copy" || kind == "delete") && apierr.From(r.err).Status() == http.StatusNotFound {
			return nil
		}
		return r.err
	}
	dec := json.NewDecoder(bytes.NewReader(r.reply.Body))
	for {
		var line struct {
			Error string `json:"error"`
		}
		if err := dec.Decode(&line); err != nil {
			return nil
		}
		if line.Error != "" {
			return &apierr.Error{Code: http.StatusInternalServerError, Msg: line.Error}
		}
	}
}

// fanOutResult is the answer of a fanned-out request once every member
// answered: the first member's answer when all succeeded, else an error
// naming those that failed (with the status of the only one, or 404 when
// no member had the model to copy or delete, else 502).
func (p *Pool) fanOutResult(req *http.Request, kind string, results []result) (*http.Response, error) {
	var failed []string
	var codes []int
	var success *result
	missing := 0
	for i, r := range results {
		err := memberFailure(kind, r)
		switch {
		case err != nil:
			he := apierr.From(err)
			failed = append(failed, r.m.shown()+": "+he.Message())
			codes = append(codes, he.Status())
		case r.err != nil:
			missing++
		case success == nil:
			success = &results[i]
		}
	}
	if len(failed) > 0 {
		code := http.StatusBadGateway
		if len(failed) == len(results) {
			code = codes[0]
		}
		return nil, &apierr.Error{Code: code, Msg: fmt.Sprintf("%s failed on %d of %d upstreams: %s",
			kind, len(failed), len(results), strings.Join(failed, "; "))}
	}
	if success == nil {
		if missing > 0 {
			return nil, results[0].err
		}
		return nil, errors.New("no upstream answered")
	}
	return synthetic(req, http.StatusOK, success.reply.Header.Clone(), success.reply.Body), nil
}
