package repair

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/contractgateway/gateway/validators/strictjson"
)

// step scripts one reply of the fake model, in the ways real models fail.
// The reply starts from the document the call was about (ORIGINAL_JSON of a
// repair call, CURRENT_JSON of a regeneration call) or, with whole, from the
// truth; then fix, rewrite and items shape it; then it is rendered.
type step struct {
	// whole answers the truth document instead of the one it was given
	// (a model that writes the document out afresh).
	whole bool
	// fix lists pointers whose value is set to the truth's: the violations
	// the model fixes. The others it leaves alone.
	fix []string
	// rewrite lists items whose explanation the model rephrases without
	// cause; rewriteAll rephrases every item (a regeneration call whose
	// indices the model ignores).
	rewrite    []int
	rewriteAll bool
	// dropLast removes the last item (a model that shortens the set
	// without being asked).
	dropLast bool
	// items answers only these items of the result, as an array (or the
	// lone object with single), as a regeneration reply may.
	items  []int
	single bool
	// full answers a scoped call with the whole document (the truth with
	// the shown items in place) instead of the keyed items; keys answers
	// it keyed by these item keys instead of the ones shown.
	full bool
	keys []string
	// prose puts sentences before and after the fenced block; truncate cuts
	// the reply in the middle of the document; bare drops the fence.
	prose, truncate, bare bool
	// err answers with an error, as Ollama's client does on a 500.
	err error
	// block waits until the call's context is done (a hung upstream).
	block bool
	// cancel is called before the reply (the client disconnects while the
	// call is in flight); then the step blocks until the context is done.
	cancel bool
}

// fakeModel is a scripted, in-process Model. It records every request and
// answers call n with script[n-1]; a call beyond the script is an error the
// test sees in the recorded requests and in the call count.
type fakeModel struct {
	truth  *strictjson.Value
	script []step
	// cancel is the test's cancel function, for steps with cancel set.
	cancel context.CancelFunc

	mu   sync.Mutex
	reqs []ModelRequest
	// usage adds up the tokens of the replies given, errors included.
	usage Usage
}

var _ Model = (*fakeModel)(nil)

// errServer is what a model client returns for an HTTP 500.
var errServer = errors.New(`ollama generate: {"error":"model runner has unexpectedly stopped"} (status 500)`)

func (m *fakeModel) Complete(ctx context.Context, req ModelRequest) (Reply, error) {
	r, err := textReply(m.complete(ctx, req))
	r.PromptTokens = (len(req.System) + len(req.Prompt)) / 4
	m.mu.Lock()
	m.usage.add(r)
	m.mu.Unlock()
	return r, err
}

// textReply is a Reply of text with its output counted as one token per
// four bytes, roughly what a tokenizer makes of English and JSON.
func textReply(text string, err error) (Reply, error) {
	return Reply{Text: text, OutputTokens: len(text) / 4}, err
}

func (m *fakeModel) complete(ctx context.Context, req ModelRequest) (string, error) {
	m.mu.Lock()
	m.reqs = append(m.reqs, req)
	n := len(m.reqs)
	m.mu.Unlock()
	if n > len(m.script) {
		return "", fmt.Errorf("fake model: unscripted call %d", n)
	}
	s := m.script[n-1]
	if s.cancel {
		m.cancel()
		s.block = true
	}
	if s.block {
		<-ctx.Done()
		return "", fmt.Errorf("ollama generate: %w", ctx.Err())
	}
	if s.err != nil {
		return "", s.err
	}
	doc, shown := m.source(s, req.Prompt)
	return m.render(s, doc, shown)
}

// requests returns a copy of the recorded requests.
func (m *fakeModel) requests() []ModelRequest {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]ModelRequest(nil), m.reqs...)
}

// source is the document a step starts from. A scoped call shows items
// keyed "questions[i]": they are put into the truth at their indices, and
// the keys shown are returned so that the reply can be keyed the same way.
func (m *fakeModel) source(s step, prompt string) (*strictjson.Value, []string) {
	if s.whole {
		return m.truth.Clone(), nil
	}
	for _, marker := range []string{"\n\nORIGINAL_JSON:\n", "\n\nCURRENT_JSON:\n"} {
		if _, doc, ok := strings.Cut(prompt, marker); ok {
			if v, err := strictjson.Parse([]byte(doc)); err == nil {
				if v.Kind == strictjson.KindObject && len(v.Members) > 0 && strings.HasPrefix(v.Members[0].Key, "questions[") {
					return m.unscope(v)
				}
				return v, nil
			}
		}
	}
	return m.truth.Clone(), nil
}

// unscope puts the items of a scoped payload into a copy of the truth.
func (m *fakeModel) unscope(v *strictjson.Value) (*strictjson.Value, []string) {
	doc := m.truth.Clone()
	qs := doc.Get("questions")
	var keys []string
	for _, mem := range v.Members {
		var i int
		if _, err := fmt.Sscanf(mem.Key, "questions[%d]", &i); err == nil && i < len(qs.Items) {
			qs.Items[i] = mem.Value
			keys = append(keys, mem.Key)
		}
	}
	return doc, keys
}

func (m *fakeModel) render(s step, doc *strictjson.Value, shown []string) (string, error) {
	for _, p := range s.fix {
		want, err := m.truth.At(p)
		if err != nil {
			return "", fmt.Errorf("fake model: truth has no %s: %w", p, err)
		}
		if doc, err = strictjson.Replace(doc, p, want.Clone()); err != nil {
			return "", fmt.Errorf("fake model: fix %s: %w", p, err)
		}
	}
	qs := doc.Get("questions")
	rewrite := s.rewrite
	if s.rewriteAll {
		rewrite = nil
		for i := range qs.Items {
			rewrite = append(rewrite, i)
		}
	}
	for _, i := range rewrite {
		q := qs.Items[i]
		old, _ := q.Get("explanation").AsString()
		if err := q.Replace("/explanation", strictjson.String("In other words: "+old)); err != nil {
			return "", err
		}
	}
	if s.dropLast {
		qs.Items = qs.Items[:len(qs.Items)-1]
	}
	out := doc
	if shown != nil && !s.full && s.items == nil {
		keys := shown
		if s.keys != nil {
			keys = s.keys
		}
		out = strictjson.Object()
		for k, key := range keys {
			var i int
			fmt.Sscanf(shown[min(k, len(shown)-1)], "questions[%d]", &i)
			out.Members = append(out.Members, strictjson.Member{Key: key, KeyOffset: -1, Value: qs.Items[i]})
		}
	}
	if s.items != nil {
		out = strictjson.Array()
		for _, i := range s.items {
			out.Items = append(out.Items, qs.Items[i])
		}
		if s.single {
			out = out.Items[0]
		}
	}
	text := string(strictjson.MarshalIndent(out, "  "))
	if s.truncate {
		text = text[:len(text)/2]
	}
	if !s.bare {
		text = "```json\n" + text
		if !s.truncate {
			text += "\n```"
		}
	}
	if s.prose {
		text = "Sure! Here is the corrected JSON:\n\n" + text + "\n\nI fixed every violation in the report."
	}
	return text, nil
}

// sentViolations reads the violations a request showed the model (the
// VIOLATION_REPORT of a repair call, the VIOLATIONS of a regeneration call)
// as "CODE@path".
func sentViolations(prompt string) []string {
	var raw string
	if _, rest, ok := strings.Cut(prompt, "VIOLATION_REPORT:\n"); ok {
		rep, _, _ := strings.Cut(rest, "\n\nORIGINAL_JSON:\n")
		var r struct {
			Violations []struct{ Code, Path string } `json:"violations"`
		}
		if json.Unmarshal([]byte(rep), &r) != nil {
			return []string{"unreadable report"}
		}
		out := []string{}
		for _, v := range r.Violations {
			out = append(out, v.Code+"@"+v.Path)
		}
		return out
	}
	if _, rest, ok := strings.Cut(prompt, "\n\nVIOLATIONS:\n"); ok {
		raw, _, _ = strings.Cut(rest, "\n\nCURRENT_JSON:\n")
		var vs []struct{ Code, Path string }
		if json.Unmarshal([]byte(raw), &vs) != nil {
			return []string{"unreadable violations"}
		}
		out := []string{}
		for _, v := range vs {
			out = append(out, v.Code+"@"+v.Path)
		}
		return out
	}
	return nil
}
