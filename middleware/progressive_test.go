package middleware

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/labstack/echo/v4"
	"go.uber.org/goleak"

	"github.com/contractgateway/gateway/contracts"
	"github.com/contractgateway/gateway/internal/mcqgen"
	"github.com/contractgateway/gateway/middleware/apierr"
	"github.com/contractgateway/gateway/middleware/codec"
	"github.com/contractgateway/gateway/middleware/release"
	"github.com/contractgateway/gateway/middleware/route"
	"github.com/contractgateway/gateway/validators/packs"
	"github.com/contractgateway/gateway/validators/strictjson"
)

// itemUpstream is a paced model writing an MCQ document item by item on
// /api/generate: chunk k at chunks[k].at after the call began. A repair
// or regeneration call (its prompt holds "Repair ONLY" or "Replace ONLY")
// is answered with repair after
// repairDelay, or with repairSeq's n-th, the last for the rest, when set. cancelled is closed when the first call's context ends
// before its last chunk: the client left and the call with it.
type itemUpstream struct {
	chunks      []pacedChunk
	repair      string
	repairSeq   []string
	repairDelay time.Duration
	cancelled   chan struct{}
	repairs     int
	// prompts are the bodies of the repair and regeneration calls.
	prompts []string
	mu      sync.Mutex
}

type pacedChunk struct {
	at   time.Duration
	text string
}

func ndjsonChunk(text string, done bool) string {
	m := map[string]any{"model": "m", "response": text, "done": done}
	if done {
		m["done_reason"], m["eval_count"], m["prompt_eval_count"] = "stop", 10, 5
	}
	b, _ := json.Marshal(m)
	return string(b) + "\n"
}

func (u *itemUpstream) Do(req *http.Request) (*http.Response, error) {
	body, _ := io.ReadAll(req.Body)
	pr, pw := io.Pipe()
	ctx := req.Context()
	if bytes.Contains(body, []byte("Repair ONLY")) || bytes.Contains(body, []byte("Replace ONLY")) {
		u.mu.Lock()
		reply := u.repair
		if len(u.repairSeq) > 0 {
			reply = u.repairSeq[min(u.repairs, len(u.repairSeq)-1)]
		}
		u.repairs++
		u.prompts = append(u.prompts, string(body))
		u.mu.Unlock()
		go func() {
			select {
			case <-time.After(u.repairDelay):
				io.WriteString(pw, ndjsonChunk(reply, false)+ndjsonChunk("", true))
				pw.Close()
			case <-ctx.Done():
				pw.CloseWithError(ctx.Err())
			}
		}()
	} else {
		go func() {
			start := time.Now()
			for _, c := range u.chunks {
				select {
				case <-time.After(c.at - time.Since(start)):
					io.WriteString(pw, ndjsonChunk(c.text, false))
				case <-ctx.Done():
					if u.cancelled != nil {
						close(u.cancelled)
					}
					pw.CloseWithError(ctx.Err())
					return
				}
			}
			io.WriteString(pw, ndjsonChunk("", true))
			pw.Close()
		}()
	}
	return &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"application/x-ndjson"}},
		Body: pr, ContentLength: -1, Request: req}, nil
}

// fakeStream is a codec.StreamWriter that records what it was asked to write
// and when, and writes a line of each to the response so that the stream
// is committed as a codec's writer commits it.
type fakeStream struct {
	mu     sync.Mutex
	w      http.ResponseWriter
	start  time.Time
	events []streamEvent
	first  chan struct{}
}

type streamEvent struct {
	at   time.Duration
	kind string // text, end, fail
	text string
	obj  *strictjson.Value
	err  *apierr.Error
}

func (f *fakeStream) add(e streamEvent) {
	f.mu.Lock()
	defer f.mu.Unlock()
	e.at = time.Since(f.start)
	if e.kind == "text" && f.first != nil {
		close(f.first)
		f.first = nil
	}
	f.events = append(f.events, e)
	io.WriteString(f.w, e.kind+"\n")
}

func (f *fakeStream) Text(delta string) error {
	f.add(streamEvent{kind: "text", text: delta})
	return nil
}
func (f *fakeStream) End(obj *strictjson.Value, text string) error {
	f.add(streamEvent{kind: "end", obj: obj, text: text})
	return nil
}
func (f *fakeStream) Fail(e *apierr.Error) error {
	f.add(streamEvent{kind: "fail", err: e})
	return nil
}

// mcqChunks is a five-question MCQ document as a model writes it (meta
// first), one question a second, its close at 6 s; edit changes the
// questions first. It returns the valid questions too.
func mcqChunks(t *testing.T, edit func(qs []*strictjson.Value)) ([]pacedChunk, []*strictjson.Value) {
	t.Helper()
	doc, err := strictjson.ParseString(mcqgen.Questions(5))
	if err != nil {
		t.Fatal(err)
	}
	good := doc.Clone().Get("questions").Items
	qs := doc.Get("questions").Items
	if edit != nil {
		edit(qs)
	}
	chunks := []pacedChunk{{time.Second, `{"meta":` + string(strictjson.Marshal(doc.Get("meta"))) + `,"questions":[` + string(strictjson.Marshal(qs[0]))}}
	for i, q := range qs[1:] {
		chunks = append(chunks, pacedChunk{time.Duration(i+2) * time.Second, "," + string(strictjson.Marshal(q))})
	}
	return append(chunks, pacedChunk{6 * time.Second, "]}"}), good
}

type streamRun struct {
	code   int
	body   string
	events []streamEvent
	logged []Event
	writes []timedWrite
}

// timedRecorder records each write to the client with its time, keep-alives
// and the stream writer's frames alike.
type timedRecorder struct {
	*httptest.ResponseRecorder
	start  time.Time
	mu     sync.Mutex
	writes []timedWrite
}

func (r *timedRecorder) Write(b []byte) (int, error) {
	r.mu.Lock()
	r.writes = append(r.writes, timedWrite{at: time.Since(r.start), data: string(b)})
	r.mu.Unlock()
	return r.ResponseRecorder.Write(b)
}

// serveStream sends a guarded mcq stream request through a guard whose
// stream writer is a fakeStream; leave, when set, ends the client's
// request once the first item was written.
func serveStream(t *testing.T, up Upstream, header map[string]string, leave bool) streamRun {
	t.Helper()
	return serveStreamEvery(t, up, header, leave, 0)
}

// serveStreamEvery is serveStream with the guard's keep-alive interval
// (zero: the default).
func serveStreamEvery(t *testing.T, up Upstream, header map[string]string, leave bool, keepAlive time.Duration) streamRun {
	t.Helper()
	return serveStreamOn(t, builtinRoutes(t), "mcq", up, header, leave, keepAlive)
}

// serveStreamOn is serveStreamEvery for the named contract of routes.
func serveStreamOn(t *testing.T, routes *route.Routes, contract string, up Upstream, header map[string]string, leave bool, keepAlive time.Duration) streamRun {
	t.Helper()
	var (
		mu     sync.Mutex
		logged []Event
	)
	cfg := DefaultGuardConfig
	cfg.Resolver = routes
	cfg.Upstream = up
	cfg.StreamKeepAlive = keepAlive
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	cfg.Observe = func(ev Event) { mu.Lock(); logged = append(logged, ev); mu.Unlock() }
	fs := &fakeStream{start: time.Now(), first: make(chan struct{})}
	first := fs.first
	cfg.newStreamWriter = func(_ codec.Codec, w http.ResponseWriter, _ *codec.Request) codec.StreamWriter {
		fs.w = w
		return fs
	}
	guard, err := cfg.ToMiddleware()
	if err != nil {
		t.Fatal(err)
	}
	e := echo.New()
	e.HTTPErrorHandler = ErrorHandler
	e.Use(guard)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if leave {
		go func() {
			<-first
			cancel()
		}()
	}
	req := httptest.NewRequest(http.MethodPost, "/api/generate", strings.NewReader(`{"model":"m","prompt":"p"}`)).WithContext(ctx)
	req.Header.Set("X-Contract", contract)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	rec := &timedRecorder{ResponseRecorder: httptest.NewRecorder(), start: fs.start}
	e.ServeHTTP(rec, req)
	synctest.Wait()
	fs.mu.Lock()
	defer fs.mu.Unlock()
	mu.Lock()
	defer mu.Unlock()
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return streamRun{code: rec.Code, body: rec.Body.String(), events: fs.events, logged: logged, writes: rec.writes}
}

// texts returns the times of the text events and their concatenation.
func (r streamRun) texts() ([]time.Duration, string) {
	var at []time.Duration
	var b strings.Builder
	for _, e := range r.events {
		if e.kind == "text" {
			at = append(at, e.at)
			b.WriteString(e.text)
		}
	}
	return at, b.String()
}

func durations(ss ...float64) []time.Duration {
	out := make([]time.Duration, len(ss))
	for i, s := range ss {
		out[i] = time.Duration(s * float64(time.Second))
	}
	return out
}

// TestProgressiveStream: a guarded stream of an item contract releases
// each question as it validates, long before the model ends; a broken
// question is repaired in flight while later ones wait; a question beyond
// repair ends the stream with the contract failure, never a silent pass.
func TestProgressiveStream(t *testing.T) {
	tests := []struct {
		name       string
		edit       func(qs []*strictjson.Value)
		repair     string   // "GOOD": the valid question 2
		repairSeq  []string // each call's reply; "ITEM": the valid question 2 alone
		wantTexts  []time.Duration
		wantEnd    string        // end or fail
		wantEndAt  time.Duration // 0: 6 s, the model's end
		wantStatus string
		// wantRepairs is the repair requests the upstream saw, wantCalls
		// (when not 0) the model calls the answer counts.
		wantRepairs int
		wantCalls   int
	}{
		// Each question goes out in two pieces (its opening, then the
		// rest) at the same instant; the last delta is the array's close.
		{name: "valid", wantTexts: durations(1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6), wantEnd: "end", wantStatus: "valid"},
		{name: "broken question repaired in flight", edit: func(qs []*strictjson.Value) {
			qs[2].Set("answer", strictjson.Int(9))
		}, repair: "GOOD", wantTexts: durations(1, 1, 2, 2, 5, 5, 5, 5, 5, 5, 6), wantEnd: "end", wantStatus: "repaired", wantRepairs: 1},
		// Two scoped repairs (mcq's max_repairs; the second at the re-run
		// temperature, for the first changed nothing), then a
		// regeneration: the answer's whole budget of item calls. The
		// second, made at 5 s, has no output yet when the model's answer
		// ends at 6 s: it waits for the model's slot, as far as the
		// gateway can tell, and is withdrawn and made again with every
		// broken question by then (the upstream saw four requests; three
		// calls count).
		{name: "question beyond repair after release", edit: func(qs []*strictjson.Value) {
			qs[2].Set("answer", strictjson.Int(9))
		}, repair: `{"nothing":true}`, wantTexts: durations(1, 1, 2, 2), wantEnd: "fail", wantEndAt: 10 * time.Second, wantStatus: "failed", wantRepairs: 4, wantCalls: 3},
		// The scoped repair changes nothing: the second, at the re-run
		// temperature (withdrawn at 6 s and made again), mends the
		// question, still before any later one goes out.
		{name: "question repaired by a second call in flight", edit: func(qs []*strictjson.Value) {
			qs[2].Set("answer", strictjson.Int(9))
		}, repairSeq: []string{`{"nothing":true}`, "ITEM"}, wantTexts: durations(1, 1, 2, 2, 8, 8, 8, 8, 8, 8, 8), wantEnd: "end", wantEndAt: 8 * time.Second, wantStatus: "repaired", wantRepairs: 3, wantCalls: 2},
		// Neither scoped repair changes anything: the question is written
		// anew (partial regeneration), still before any later one goes out.
		{name: "question regenerated in flight", edit: func(qs []*strictjson.Value) {
			qs[2].Set("answer", strictjson.Int(9))
		}, repairSeq: []string{`{"nothing":true}`, `{"nothing":true}`, `{"nothing":true}`, "ITEM"}, wantTexts: durations(1, 1, 2, 2, 10, 10, 10, 10, 10, 10, 10), wantEnd: "end", wantEndAt: 10 * time.Second, wantStatus: "repaired", wantRepairs: 4, wantCalls: 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				chunks, good := mcqChunks(t, tt.edit)
				up := &itemUpstream{chunks: chunks, repair: tt.repair, repairDelay: 2 * time.Second}
				if tt.repair == "GOOD" {
					up.repair = `{"questions[2]":` + string(strictjson.Marshal(good[2])) + `}`
				}
				for _, r := range tt.repairSeq {
					if r == "ITEM" {
						r = string(strictjson.Marshal(good[2]))
					}
					up.repairSeq = append(up.repairSeq, r)
				}
				r := serveStream(t, up, nil, false)
				at, text := r.texts()
				if len(at) != len(tt.wantTexts) {
					t.Fatalf("text deltas at %v, want at %v", at, tt.wantTexts)
				}
				for i := range at {
					if at[i] != tt.wantTexts[i] {
						t.Errorf("text delta %d at %v, want %v", i, at[i], tt.wantTexts[i])
					}
				}
				last := r.events[len(r.events)-1]
				if endAt := cmp.Or(tt.wantEndAt, 6*time.Second); last.kind != tt.wantEnd || last.at != endAt {
					t.Fatalf("stream ends with %s at %v, want %s at %v", last.kind, last.at, tt.wantEnd, endAt)
				}
				if up.repairs != tt.wantRepairs {
					t.Errorf("%d repair calls, want %d", up.repairs, tt.wantRepairs)
				}
				if len(r.logged) != 1 || r.logged[0].Status != tt.wantStatus {
					t.Fatalf("logged %+v, want one event with status %s", r.logged, tt.wantStatus)
				}
				if tt.wantCalls != 0 && r.logged[0].LLMCalls != tt.wantCalls {
					t.Errorf("logged %d model calls, want %d", r.logged[0].LLMCalls, tt.wantCalls)
				}
				if tt.wantEnd == "fail" {
					if last.err.Code != http.StatusUnprocessableEntity || last.err.Report == nil || last.err.Report.Valid {
						t.Errorf("failure %d %q, want 422 with the invalid report", last.err.Code, last.err.Msg)
					}
					return
				}
				if last.text != text {
					t.Errorf("End's text is not the deltas' concatenation:\n%s\n%s", last.text, text)
				}
				if got, _ := last.obj.Get("response").AsString(); got != text {
					t.Errorf("the answer object's response is not the text: %.80q", got)
				}
				if status, _ := last.obj.Get("contract").Get("status").AsString(); status != tt.wantStatus {
					t.Errorf("summary status %q, want %s", status, tt.wantStatus)
				}
				v, _ := packs.Builtin("mcq")
				params, _ := v.Params(nil)
				if rep := v.Validate(text, params).Report; !rep.Valid {
					t.Errorf("the streamed document is invalid: %v", rep.Codes())
				}
				if !strings.HasPrefix(text, `{"questions":[{"question_id":"Q001"`) {
					t.Errorf("the stream starts %.40q", text)
				}
			})
		})
	}
}

// TestProgressiveStreamBuffered: with X-Contract-Stream: buffered the
// answer is held and sent whole, as without progressive release; an
// unknown value is the client's error.
func TestProgressiveStreamBuffered(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		chunks, _ := mcqChunks(t, nil)
		r := serveStream(t, &itemUpstream{chunks: chunks}, map[string]string{"X-Contract-Stream": "buffered"}, false)
		if len(r.events) != 0 || r.code != http.StatusOK || !strings.Contains(r.body, `"done":true`) || len(r.logged) != 1 || r.logged[0].Status != "valid" {
			t.Errorf("buffered: %d writer events, status %d, body %.120q, logged %+v", len(r.events), r.code, r.body, r.logged)
		}
		r = serveStream(t, &itemUpstream{chunks: chunks}, map[string]string{"X-Contract-Stream": "sometimes"}, false)
		if r.code != http.StatusBadRequest || !strings.Contains(r.body, `"error":"X-Contract-Stream \"sometimes\": want progressive or buffered"`) {
			t.Errorf("unknown mode: status %d, body %q", r.code, r.body)
		}
	})
}

// TestProgressiveStreamClientLeaves: a client that leaves after the first
// question cancels the model's call at once, and nothing is left running.
func TestProgressiveStreamClientLeaves(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	synctest.Test(t, func(t *testing.T) {
		chunks, _ := mcqChunks(t, nil)
		up := &itemUpstream{chunks: chunks, cancelled: make(chan struct{})}
		r := serveStream(t, up, nil, true)
		select {
		case <-up.cancelled:
		default:
			t.Fatal("the model's call was not cancelled when the client left")
		}
		if at, text := r.texts(); len(at) != 2 || !strings.HasSuffix(text, "}") {
			t.Errorf("text deltas at %v (%.60q), want the first question's two pieces only", at, text)
		}
		for _, e := range r.events {
			if e.kind != "text" {
				t.Errorf("a %s event for a client gone", e.kind)
			}
		}
	})
}

// TestRouteStream: a route's stream key reaches the resolved route, for
// its virtual model and for a header contract sent to it.
func TestRouteStream(t *testing.T) {
	reg, err := contracts.LoadRegistry("")
	if err != nil {
		t.Fatal(err)
	}
	routes, err := route.NewRoutes(reg, []route.Spec{{Model: "quiz", Contract: "mcq", Stream: release.Buffered}, {Model: "live", Contract: "mcq"}}, false)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		lookup route.Lookup
		want   string
	}{
		{route.Lookup{Model: "quiz"}, release.Buffered},
		{route.Lookup{Model: "quiz", Contract: "mcq"}, release.Buffered},
		{route.Lookup{Model: "live"}, ""},
		{route.Lookup{Model: "other", Contract: "mcq"}, ""},
	}
	for _, tt := range tests {
		r, err := routes.Resolve(tt.lookup)
		if err != nil || r.Stream != tt.want {
			t.Errorf("Resolve(%+v).Stream = %q, %v; want %q", tt.lookup, r.Stream, err, tt.want)
		}
	}
}
