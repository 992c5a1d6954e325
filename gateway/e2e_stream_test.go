//go:build unix

package gateway

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/contractgateway/gateway/config"
	"github.com/contractgateway/gateway/internal/mcqgen"
	"github.com/contractgateway/gateway/internal/ollamatest"
	"github.com/contractgateway/gateway/repair"
	"github.com/contractgateway/gateway/validators/packs"
)

// pacedQuiz is a fake Ollama that writes an eight-question mcq quiz as a
// model would, a small piece per chunk at a steady pace, in the stream of
// whichever API it is asked on (/api/generate, /api/chat,
// /v1/chat/completions, /v1/messages). It holds its last question until
// the test closes gate, so that whatever a client has before then
// arrived before the model ended — the proof that a guarded stream
// streams, without a clock in the assertion. Other texts hold at more
// places (holds, each until its gate closes) and answer item-scoped
// repair calls (newPacedElements).
type pacedQuiz struct {
	text string
	// holds are offsets into text, in order: nothing from holds[i] on is
	// written before gates[i] closes.
	holds []int
	gates []chan struct{}
	// gate is the one gate of newPacedQuiz, before its last question.
	gate chan struct{}
	// repair, when set, is the answer to a repair call (an /api/generate
	// with the repair system prompt), written at the same pace without
	// holds; repairPrompts records the prompts of those calls.
	repair string
	pace   time.Duration
	piece  int

	mu            sync.Mutex
	paths         []string
	repairPrompts []string
}

// startQuizGateway serves up and starts a gateway in front of it whose
// virtual model quiz guards the upstream's model m with mcq; it returns
// the gateway's URL.
func startQuizGateway(t *testing.T, up *pacedQuiz) string {
	t.Helper()
	cfg := config.Default()
	cfg.Listen = "127.0.0.1:0"
	cfg.Upstream = startPaced(t, up)
	cfg.Routes = []config.Route{{Model: "quiz", Upstream: "m", Contract: "mcq"}}
	return startE2EGateway(t, cfg)
}

func newPacedQuiz(n int) *pacedQuiz {
	text := mcqgen.Questions(n)
	gate := make(chan struct{})
	return &pacedQuiz{
		text:  text,
		holds: []int{strings.Index(text, fmt.Sprintf(`{"question_id":"Q%03d"`, n))},
		gates: []chan struct{}{gate},
		gate:  gate,
		pace:  2 * time.Millisecond,
		piece: 8,
	}
}

func (q *pacedQuiz) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Model  string `json:"model"`
		System string `json:"system"`
		Prompt string `json:"prompt"`
	}
	_ = json.NewDecoder(r.Body).Decode(&req)
	if r.URL.Path == "/" {
		io.WriteString(w, "Ollama is running")
		return
	}
	if r.URL.Path == "/api/show" {
		// The ollama CLI asks what the model is before it runs it.
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"modelfile":"","parameters":"","template":"{{ .Prompt }}","details":{"format":"gguf","family":"llama","parameter_size":"260K","quantization_level":"F32"},"model_info":{"general.architecture":"llama"},"capabilities":["completion"]}`)
		return
	}
	text, holds, gates := q.text, q.holds, q.gates
	q.mu.Lock()
	q.paths = append(q.paths, r.URL.Path)
	if q.repair != "" && r.URL.Path == "/api/generate" && req.System == repair.RepairSystemPrompt {
		text, holds, gates = q.repair, nil, nil
		q.repairPrompts = append(q.repairPrompts, req.Prompt)
	}
	q.mu.Unlock()
	enc := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	var piece func(s string) string
	var start, end string
	switch r.URL.Path {
	case "/api/generate", "/api/chat":
		w.Header().Set("Content-Type", "application/x-ndjson")
		chunk := func(s string, done bool) map[string]any {
			m := map[string]any{"model": req.Model, "created_at": "2026-11-25T00:00:00Z", "done": done}
			if r.URL.Path == "/api/generate" {
				m["response"] = s
			} else {
				m["message"] = map[string]any{"role": "assistant", "content": s}
			}
			if done {
				m["done_reason"], m["eval_count"], m["prompt_eval_count"] = "stop", 1400, 9
			}
			return m
		}
		piece = func(s string) string { return enc(chunk(s, false)) + "\n" }
		end = enc(chunk("", true)) + "\n"
	case "/v1/chat/completions":
		w.Header().Set("Content-Type", "text/event-stream")
		chunk := func(delta map[string]any, finish any) string {
			return "data: " + enc(map[string]any{"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": req.Model,
				"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}) + "\n\n"
		}
		start = chunk(map[string]any{"role": "assistant", "content": ""}, nil)
		piece = func(s string) string { return chunk(map[string]any{"content": s}, nil) }
		end = chunk(map[string]any{}, "stop") + "data: [DONE]\n\n"
	case "/v1/messages":
		w.Header().Set("Content-Type", "text/event-stream")
		event := func(name string, v map[string]any) string {
			v["type"] = name
			return "event: " + name + "\ndata: " + enc(v) + "\n\n"
		}
		start = event("message_start", map[string]any{"message": map[string]any{"id": "msg_1", "type": "message", "role": "assistant",
			"model": req.Model, "content": []any{}, "stop_reason": nil, "usage": map[string]any{"input_tokens": 9, "output_tokens": 0}}}) +
			event("content_block_start", map[string]any{"index": 0, "content_block": map[string]any{"type": "text", "text": ""}})
		piece = func(s string) string {
			return event("content_block_delta", map[string]any{"index": 0, "delta": map[string]any{"type": "text_delta", "text": s}})
		}
		end = event("content_block_stop", map[string]any{"index": 0}) +
			event("message_delta", map[string]any{"delta": map[string]any{"stop_reason": "end_turn", "stop_sequence": nil}, "usage": map[string]any{"output_tokens": 1400}}) +
			event("message_stop", map[string]any{})
	default:
		http.NotFound(w, r)
		return
	}
	f := w.(http.Flusher)
	write := func(s string) bool {
		if _, err := io.WriteString(w, s); err != nil {
			return false
		}
		f.Flush()
		return true
	}
	if !write(start) {
		return
	}
	tick := time.NewTicker(q.pace)
	defer tick.Stop()
	for off, next := 0, 0; off < len(text); {
		if next < len(holds) && holds[next] == off {
			select {
			case <-gates[next]:
			case <-r.Context().Done():
				return
			}
			next++
			continue
		}
		to := min(off+q.piece, len(text))
		if next < len(holds) && holds[next] < to {
			to = holds[next] // write up to the hold, then wait there
		}
		select {
		case <-tick.C:
		case <-r.Context().Done():
			return
		}
		if !write(piece(text[off:to])) {
			return
		}
		off = to
	}
	write(end)
}

func (q *pacedQuiz) seen() []string {
	q.mu.Lock()
	defer q.mu.Unlock()
	return append([]string(nil), q.paths...)
}

// repairCalls returns the prompts of the repair calls answered so far.
func (q *pacedQuiz) repairCalls() []string {
	q.mu.Lock()
	defer q.mu.Unlock()
	return append([]string(nil), q.repairPrompts...)
}

// nodeStream is a run of stream.mjs: its stdout line by line as the
// client writes them (closed at its end), and its stderr.
type nodeStream struct {
	cmd    *exec.Cmd
	lines  chan string
	stderr strings.Builder
}

// startNodeStream starts `node stream.mjs client` in dir with env added to
// the environment; ctx bounds the run.
func startNodeStream(t *testing.T, ctx context.Context, node, dir, client string, env ...string) *nodeStream {
	t.Helper()
	ns := &nodeStream{cmd: exec.CommandContext(ctx, node, "stream.mjs", client), lines: make(chan string)}
	ns.cmd.Dir = dir
	ns.cmd.Env = append(os.Environ(), env...)
	ns.cmd.Stderr = &ns.stderr
	out, err := ns.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := ns.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(ns.lines)
		sc := bufio.NewScanner(out)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			ns.lines <- sc.Text()
		}
	}()
	return ns
}

// next returns the client's next line; false when it ended or ctx did.
func (ns *nodeStream) next(ctx context.Context) (string, bool) {
	select {
	case l, ok := <-ns.lines:
		return l, ok
	case <-ctx.Done():
		return "", false
	}
}

// rest returns the client's remaining lines once it exited, and its exit
// error.
func (ns *nodeStream) rest() ([]string, error) {
	var out []string
	for l := range ns.lines {
		out = append(out, l)
	}
	return out, ns.cmd.Wait()
}

// streamClientResult is stream.mjs's last line.
type streamClientResult struct {
	Error          string `json:"error"`
	Text           string `json:"text"`
	Updates        int    `json:"updates"`
	QuestionCounts []int  `json:"question_counts"`
}

// TestE2EStreamClients runs real npm clients, unchanged, through a
// guarded progressive stream of an mcq quiz (gateway/testdata/node/
// stream.mjs): each reports its first text or its first question while
// the paced upstream still holds the last question, and each ends with a
// document the mcq contract accepts. The structured clients (the Vercel
// AI SDK's streamObject, LangChain's withStructuredOutput) show a
// questions array that grows before the model ended.
func TestE2EStreamClients(t *testing.T) {
	node, dir := nodeClientsDir(t)
	schema, err := filepath.Abs(filepath.Join("..", "contracts", "builtin", "mcq", "schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	v, err := packs.Builtin("mcq")
	if err != nil {
		t.Fatal(err)
	}
	params, _ := v.Params(nil)
	tests := []struct {
		client string
		// path is the upstream path the client's request reaches.
		path string
		// structured: the client reports parsed partial objects, whose
		// questions array must have grown before the model ended.
		structured bool
	}{
		{"ollama", "/api/generate", false},
		{"openai", "/v1/chat/completions", false},
		{"anthropic", "/v1/messages", false},
		{"ai_stream_object", "/api/chat", true},
		{"langchain", "/api/chat", true},
	}
	for _, tt := range tests {
		t.Run(tt.client, func(t *testing.T) {
			up := newPacedQuiz(8)
			gw := startQuizGateway(t, up)

			ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			defer cancel()
			ns := startNodeStream(t, ctx, node, dir, tt.client, "CG_GATEWAY_URL="+gw, "CG_GUARDED_MODEL=quiz", "CG_SCHEMA="+schema)
			// The upstream holds the last question until the client has
			// reported its first piece: a client that gets nothing before
			// the end never reports and the test times out here.
			firstLine, ok := ns.next(ctx)
			if !ok {
				cancel()
				_, _ = ns.rest()
				t.Fatalf("%s reported nothing while the upstream held its last question (stderr: %s)", tt.client, ns.stderr.String())
			}
			close(up.gate)
			more, err := ns.rest()
			if err != nil {
				t.Fatalf("node stream.mjs %s: %v\nstderr: %s", tt.client, err, ns.stderr.String())
			}
			last := firstLine
			if len(more) > 0 {
				last = more[len(more)-1]
			}
			n, ok := strings.CutPrefix(firstLine, "first ")
			if !ok {
				t.Fatalf("first line %q, want the client's first piece before the model ended (stderr: %s)", firstLine, ns.stderr.String())
			}
			if got, _ := strconv.Atoi(n); tt.structured && (got < 1 || got > 7) {
				t.Errorf("questions at the first update = %s, want 1 to 7 while the model held its last question", n)
			}
			var res streamClientResult
			if err := json.Unmarshal([]byte(last), &res); err != nil {
				t.Fatalf("last line %q: %v", last, err)
			}
			if res.Error != "" {
				t.Fatalf("%s failed: %s", tt.client, res.Error)
			}
			if r := v.Validate(res.Text, params); len(r.Report.Violations) != 0 {
				t.Errorf("final document has %d violations, first %+v\n%s", len(r.Report.Violations), r.Report.Violations[0], res.Text)
			}
			if res.Updates < 2 {
				t.Errorf("%d updates, want the quiz in several", res.Updates)
			}
			if tt.structured && (len(res.QuestionCounts) < 3 || res.QuestionCounts[len(res.QuestionCounts)-1] != 8) {
				t.Errorf("questions array seen as %v, want it to grow to 8", res.QuestionCounts)
			}
			if p := up.seen(); len(p) != 1 || p[0] != tt.path {
				t.Errorf("upstream calls %v, want one to %s", p, tt.path)
			}
		})
	}
}

// TestE2EStreamOllamaCLI runs the real ollama CLI with OLLAMA_HOST at the
// gateway: `ollama run` of a virtual model guarded by the mcq contract
// prints the quiz's first questions while the paced upstream still holds
// the last one, and its whole output is a document in contract.
func TestE2EStreamOllamaCLI(t *testing.T) {
	bin, err := ollamatest.FindBinary()
	if err != nil {
		if os.Getenv("CG_REQUIRE_OLLAMA") == "1" {
			t.Fatal(err)
		}
		t.Skipf("%v; skipping (set CG_REQUIRE_OLLAMA=1 to fail instead)", err)
	}
	v, err := packs.Builtin("mcq")
	if err != nil {
		t.Fatal(err)
	}
	params, _ := v.Params(nil)
	up := newPacedQuiz(8)
	gw := startQuizGateway(t, up)

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "run", "quiz", "Write a quiz about Python lists")
	cmd.Env = append(os.Environ(), "OLLAMA_HOST="+gw, "HOME="+t.TempDir(), "OLLAMA_NOHISTORY=1")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The first read returns once the CLI printed something; the upstream
	// holds its last question until then.
	first := make([]byte, 64<<10)
	n, err := out.Read(first)
	if err != nil {
		_ = cmd.Wait()
		t.Fatalf("ollama run printed nothing while the upstream held its last question: %v (stderr: %s)", err, stderr.String())
	}
	printed := string(first[:n])
	close(up.gate)
	rest, err := io.ReadAll(out)
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("ollama run: %v\nstderr: %s", err, stderr.String())
	}
	if strings.TrimSpace(printed) == "" {
		t.Errorf("first output %q, want the quiz's first text", printed)
	}
	text := strings.TrimSpace(printed + string(rest))
	if r := v.Validate(text, params); len(r.Report.Violations) != 0 {
		t.Errorf("printed document has %d violations, first %+v\n%s", len(r.Report.Violations), r.Report.Violations[0], text)
	}
}

// TestE2EStreamRealOllama streams a guarded answer of the real Ollama
// (stories260K, which writes schema-valid text under a format) for a
// contract whose items need only the schema (testdata/e2e/
// stream-contracts/cast): the answer comes progressively, item by item,
// and its deltas concatenate to a document of the schema, in contract.
func TestE2EStreamRealOllama(t *testing.T) {
	o := ollamatest.Start(t)
	dir, err := filepath.Abs(filepath.Join("testdata", "e2e", "stream-contracts"))
	if err != nil {
		t.Fatal(err)
	}
	cast := compileE2ESchema(t, "cast", readE2EFile(t, dir, "cast", "schema.json"))
	cfg := config.Default()
	cfg.Listen = "127.0.0.1:0"
	cfg.Upstream = o.URL
	cfg.ContractsDir = dir
	cfg.Routes = []config.Route{{Model: "cast-json", Upstream: ollamatest.ModelName, Contract: "cast", AddFormat: true}}
	gw := startE2EGateway(t, cfg)

	body := e2eRequest(pathGenerate, "cast-json", e2ePrompt, true, nil, e2eNumPredict)
	resp, err := http.Post(gw+pathGenerate, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("status %d: %s", resp.StatusCode, b)
	}
	var text strings.Builder
	deltas := 0
	var last map[string]any
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		if m["error"] != nil {
			t.Fatalf("stream ended in an error: %s", sc.Text())
		}
		if s, _ := m["response"].(string); s != "" {
			text.WriteString(s)
			deltas++
		}
		last = m
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	checkDoc(t, cast, text.String())
	if deltas < 2 {
		t.Errorf("%d text deltas in %q, want the items and the close apart", deltas, text.String())
	}
	c, _ := last["contract"].(map[string]any)
	if last["done"] != true || c == nil || c["status"] != "valid" {
		t.Errorf("final chunk = %v, want done with a valid contract summary", last)
	}
}
