package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/contractgateway/gateway/repair"
	"github.com/contractgateway/gateway/validators"
	"github.com/contractgateway/gateway/validators/strictjson"
)

// rephraser is the held-out model of the blind-merge measurement: the
// bench's repairer, which on every repair call also rephrases the
// explanation of one question it was asked to repair. No violation ever
// asks for that, so a blind merge must undo it; every rewrite is recorded
// so that the answer can be searched for it afterwards.
type rephraser struct {
	*repairer
	rewrites []string
}

var _ repair.Model = (*rephraser)(nil)

const rephraseMark = "Put differently: "

func (m *rephraser) Complete(ctx context.Context, req repair.ModelRequest) (repair.Reply, error) {
	out, err := m.repairer.Complete(ctx, req)
	if err != nil || req.System == "" {
		return out, err
	}
	text := out.Text
	start, end := strings.Index(text, "```json\n"), strings.LastIndex(text, "\n```")
	if start < 0 || end <= start {
		return out, nil
	}
	doc, err := strictjson.Parse([]byte(text[start+8 : end]))
	if err != nil {
		return out, nil
	}
	asked := askedItems(req.Prompt)
	if len(asked) == 0 {
		return out, nil
	}
	i := asked[m.rng.IntN(len(asked))]
	q := itemAt(doc, i, len(asked))
	if q == nil {
		return out, nil
	}
	s, ok := q.Get("explanation").AsString()
	if !ok {
		return out, nil
	}
	s = rephraseMark + s
	if q.Replace("/explanation", strictjson.String(s)) != nil {
		return out, nil
	}
	m.rewrites = append(m.rewrites, s)
	return reply(text[:start] + "```json\n" + string(strictjson.MarshalIndent(doc, "  ")) + text[end:]), nil
}

// askedItems reads the question indices a repair call named in its
// violations ("questions[3].answer"), in order, without repeats.
func askedItems(prompt string) []int {
	var out []int
	seen := map[int]bool{}
	for _, line := range strings.Split(prompt, "\n") {
		line = strings.TrimSpace(line)
		rest, ok := strings.CutPrefix(line, `"path": `)
		if !ok {
			continue
		}
		var p string
		if json.Unmarshal([]byte(strings.TrimSuffix(rest, ",")), &p) != nil {
			continue
		}
		p, ok = strings.CutPrefix(p, "questions[")
		idx, _, _ := strings.Cut(p, "]")
		if i, err := strconv.Atoi(idx); ok && err == nil && !seen[i] {
			seen[i] = true
			out = append(out, i)
		}
	}
	return out
}

// itemAt finds question i in a reply: the whole document, or, for an
// item-scoped reply, the items alone (one object, or an array of them).
func itemAt(doc *strictjson.Value, i, asked int) *strictjson.Value {
	if q := doc.Get("questions[" + strconv.Itoa(i) + "]"); q != nil {
		return q
	}
	if qs := doc.Get("questions"); qs != nil && qs.Kind == strictjson.KindArray {
		return qs.Index(i)
	}
	if doc.Kind == strictjson.KindObject {
		if items := doc.Get("items"); items != nil && items.Kind == strictjson.KindArray {
			doc = items
		} else {
			return doc
		}
	}
	if doc.Kind == strictjson.KindArray {
		for _, it := range doc.Items {
			if n, ok := it.Get("index").AsInt(); ok && int(n) == i {
				if item := it.Get("item"); item != nil {
					return item
				}
				return it
			}
		}
		if len(doc.Items) == asked && asked == 1 {
			return doc.Items[0]
		}
	}
	return nil
}

// blindMerge runs the held-out model over the corpus and prints the share
// of its explanation rewrites that end up in a valid answer.
func blindMerge(w io.Writer, v *validators.Validator, params validators.Params, truth *strictjson.Value, texts []string, runs int, seed uint64) {
	made, accepted, valid := 0, 0, 0
	for r := 0; r < runs; r++ {
		for i, text := range texts {
			m := &rephraser{repairer: newRepairer(truth, seed+uint64(r), uint64(i))}
			out := repair.Run(context.Background(), repair.Job{
				Validator: v, Params: params, Text: text,
				Prompt: "Write a test of 10 multiple-choice questions about Python basics for beginners, as JSON.",
				Model:  m,
				Rerun:  func(ctx context.Context, _ float64) (repair.Reply, error) { return reply(m.rerun(text)), nil },
			})
			ok := out.Status == repair.StatusValid || out.Status == repair.StatusRepaired
			if ok {
				valid++
			}
			answer := ""
			if out.Doc != nil {
				answer = string(strictjson.Marshal(out.Doc))
			}
			for _, s := range m.rewrites {
				made++
				enc, _ := json.Marshal(s)
				if ok && strings.Contains(answer, string(enc)) {
					accepted++
				}
			}
		}
	}
	fmt.Fprintf(w, "held-out model rewriting the explanation of a question it repairs: %d answers x %d runs, seed %d\n", len(texts), runs, seed)
	fmt.Fprintf(w, "explanation rewrites made          %d\n", made)
	fmt.Fprintf(w, "rewrites accepted into the answer  %d (%s)\n", accepted, pct(accepted, made))
	fmt.Fprintf(w, "answers ending valid               %s\n", pct(valid, len(texts)*runs))
}
