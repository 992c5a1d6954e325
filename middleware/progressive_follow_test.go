package middleware

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/contractgateway/gateway/cache"
	"github.com/contractgateway/gateway/middleware/codec"
	"github.com/contractgateway/gateway/validators/packs"
	"github.com/contractgateway/gateway/validators/strictjson"
)

// followApp is an echo app with the guard, a memory cache and the paced
// upstream up; each stream request gets a fakeStream of its own, in the
// order the requests arrive, and every guarded request's Event is logged.
type followApp struct {
	e       *echo.Echo
	mu      sync.Mutex
	streams []*fakeStream
	logged  []Event
}

func newFollowApp(t *testing.T, up Upstream) *followApp {
	t.Helper()
	a := &followApp{}
	cfg := DefaultGuardConfig
	cfg.Resolver, cfg.Upstream = builtinRoutes(t), up
	cfg.Cache = NewCache(cache.NewMemory(cache.MemoryConfig{}))
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	cfg.Observe = func(ev Event) { a.mu.Lock(); a.logged = append(a.logged, ev); a.mu.Unlock() }
	start := time.Now()
	cfg.newStreamWriter = func(_ codec.Codec, w http.ResponseWriter, _ *codec.Request) codec.StreamWriter {
		fs := &fakeStream{w: w, start: start}
		a.mu.Lock()
		a.streams = append(a.streams, fs)
		a.mu.Unlock()
		return fs
	}
	mw, err := cfg.ToMiddleware()
	if err != nil {
		t.Fatal(err)
	}
	a.e = echo.New()
	a.e.HTTPErrorHandler = ErrorHandler
	a.e.Use(mw)
	return a
}

// send serves one mcq request on /api/generate, a stream or not, and
// returns its recorder and a channel closed when it is answered.
func (a *followApp) send(stream bool) (*timedRecorder, chan struct{}) {
	body := `{"model":"m","prompt":"p","stream":false}`
	if stream {
		body = `{"model":"m","prompt":"p"}`
	}
	req := httptest.NewRequest(http.MethodPost, "/api/generate", strings.NewReader(body))
	req.Header.Set("X-Contract", "mcq")
	rec := &timedRecorder{ResponseRecorder: httptest.NewRecorder(), start: time.Now()}
	done := make(chan struct{})
	go func() {
		a.e.ServeHTTP(rec, req)
		close(done)
	}()
	return rec, done
}

func (a *followApp) stream(i int) streamRun {
	a.mu.Lock()
	defer a.mu.Unlock()
	fs := a.streams[i]
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return streamRun{events: fs.events}
}

// TestCoalescedStreamFollows: a stream request identical to one in flight
// shares its model call and follows its release live: the questions
// released before it came go out at once, each later one as it
// validates, and its stream is the same document; a non-stream request
// joining then gets the whole answer when the model ends.
func TestCoalescedStreamFollows(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		chunks, _ := mcqChunks(t, nil)
		up := &itemUpstream{chunks: chunks}
		a := newFollowApp(t, up)
		_, doneA := a.send(true)
		synctest.Wait()
		time.Sleep(2500 * time.Millisecond) // questions 1 and 2 are out
		_, doneB := a.send(true)
		recC, doneC := a.send(false)
		<-doneA
		<-doneB
		<-doneC

		leader, follower := a.stream(0), a.stream(1)
		atA, textA := leader.texts()
		atB, textB := follower.texts()
		want := durations(2.5, 2.5, 2.5, 2.5, 3, 3, 4, 4, 5, 5, 6) // two pieces a question
		if len(atB) != len(want) {
			t.Fatalf("follower's deltas at %v, want at %v", atB, want)
		}
		for i := range atB {
			if atB[i] != want[i] {
				t.Errorf("follower's delta %d at %v, want %v", i, atB[i], want[i])
			}
		}
		if textB != textA || len(atA) != len(want) {
			t.Errorf("the follower's stream differs from the leader's:\n%s\n%s", textB, textA)
		}
		last := follower.events[len(follower.events)-1]
		if last.kind != "end" || last.text != textB {
			t.Fatalf("follower ends with %s %.60q, want end with its deltas' text", last.kind, last.text)
		}
		if st, _ := last.obj.Get("contract").Get("status").AsString(); st != "valid" {
			t.Errorf("follower's summary status %q, want valid", st)
		}
		v, _ := packs.Builtin("mcq")
		params, _ := v.Params(nil)
		if rep := v.Validate(textB, params).Report; !rep.Valid {
			t.Errorf("the follower's document is invalid: %v", rep.Codes())
		}
		if recC.Code != http.StatusOK || !strings.Contains(recC.Body.String(), `"done":true`) {
			t.Errorf("the non-stream request got %d %.120q", recC.Code, recC.Body.String())
		}
		if n := len(a.logged); n != 3 {
			t.Fatalf("%d events logged, want 3", n)
		}
		coalesced := 0
		for _, ev := range a.logged {
			if ev.Coalesced {
				coalesced++
			}
		}
		if coalesced != 2 {
			t.Errorf("%d requests coalesced, want 2", coalesced)
		}
	})
}

// TestNonStreamRepairAtEnd: a client that asked for one answer has no
// item released early, so a broken question waits for the answer's end,
// and one item-scoped call then repairs every broken question at once
// rather than one call each while the model writes. Every call counts
// against the answer's one budget: a model that mends nothing gets the
// mcq policy's two repairs, a regeneration and a re-run, and no more.
func TestNonStreamRepairAtEnd(t *testing.T) {
	tests := []struct {
		name    string
		broken  []int
		repairs []string // "GOOD": the valid broken questions, keyed
		// wantAt is when the answer goes out (0: not checked).
		wantAt    time.Duration
		wantCode  int
		wantCalls int // every model call made for the answer
		wantItem  int // the item-scoped and regeneration calls among them
	}{
		{name: "one broken question", broken: []int{2}, repairs: []string{"GOOD"},
			wantAt: 8 * time.Second, wantCode: http.StatusOK, wantCalls: 1, wantItem: 1},
		{name: "two broken questions, one call", broken: []int{1, 3}, repairs: []string{"GOOD"},
			wantAt: 8 * time.Second, wantCode: http.StatusOK, wantCalls: 1, wantItem: 1},
		// Two scoped repairs (the second at the re-run temperature), a
		// regeneration and the re-run, whose repeats of those calls the
		// ladder reads again without asking.
		{name: "a model that mends nothing", broken: []int{2}, repairs: []string{`{"nothing":true}`},
			wantCode: http.StatusUnprocessableEntity, wantCalls: 4, wantItem: 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				chunks, good := mcqChunks(t, func(qs []*strictjson.Value) {
					for _, i := range tt.broken {
						qs[i].Set("answer", strictjson.Int(9))
					}
				})
				up := &itemUpstream{chunks: chunks, repairDelay: 2 * time.Second}
				for _, r := range tt.repairs {
					if r == "GOOD" {
						obj := strictjson.Object()
						for _, i := range tt.broken {
							obj.Set("questions["+strconv.Itoa(i)+"]", good[i])
						}
						r = string(strictjson.Marshal(obj))
					}
					up.repairSeq = append(up.repairSeq, r)
				}
				a := newFollowApp(t, up)
				rec, done := a.send(false)
				<-done
				var at time.Duration
				for _, w := range rec.writes {
					at = max(at, w.at)
				}
				if rec.Code != tt.wantCode {
					t.Fatalf("got %d %q %.200q, want %d", rec.Code, rec.Header().Get("X-Contract-Status"), rec.Body.String(), tt.wantCode)
				}
				if tt.wantAt != 0 && at != tt.wantAt {
					t.Errorf("answered at %v, want %v", at, tt.wantAt)
				}
				if up.repairs != tt.wantItem || len(a.logged) != 1 || a.logged[0].LLMCalls != tt.wantCalls {
					t.Errorf("%d item calls, logged %+v; want %d item calls of %d logged", up.repairs, a.logged, tt.wantItem, tt.wantCalls)
				}
				if len(a.streams) != 0 {
					t.Error("a stream writer was made for a non-stream client")
				}
				if tt.wantCode != http.StatusOK {
					return
				}
				v, _ := packs.Builtin("mcq")
				params, _ := v.Params(nil)
				resp, _ := strictjson.ParseString(rec.Body.String())
				text, _ := resp.Get("response").AsString()
				if rep := v.Validate(text, params).Report; !rep.Valid {
					t.Errorf("the answer is invalid: %v", rep.Codes())
				}
			})
		})
	}
}
