package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"

	"github.com/contractgateway/gateway/internal/mcqgen"
	"github.com/contractgateway/gateway/repair"
	"github.com/contractgateway/gateway/validators"
	"github.com/contractgateway/gateway/validators/packs"
	"github.com/contractgateway/gateway/validators/strictjson"
)

// costModel is the bench's imperfect repairer with a price: every reply
// costs the bytes the model must write, a token per four bytes (reply), and
// the prompt it must read is counted the same way.
type costModel struct{ *repairer }

func (m costModel) Complete(ctx context.Context, req repair.ModelRequest) (repair.Reply, error) {
	return priced{m.repairer}.Complete(ctx, req)
}

// priced is a model whose replies count the prompt's tokens too, a token
// per four bytes, as the reply's are counted.
type priced struct{ repair.Model }

func (m priced) Complete(ctx context.Context, req repair.ModelRequest) (repair.Reply, error) {
	out, err := m.Model.Complete(ctx, req)
	out.PromptTokens = (len(req.System) + len(req.Prompt)) / 4
	return out, err
}

// tokenCell sums one configuration on one document size and fault count.
type tokenCell struct {
	n, valid          int
	prompt, output    int
	scopedOK, scopedN int
}

// tokens compares item-scoped with whole-document repair on generated MCQ
// documents of 5, 20 and 50 questions with 1, 2 and 5 broken answers (an
// answer index past the options, which only a model can fix), and prints
// the tokens the model was asked for per answer that ended valid, side by
// side with their ratio, and the success rates.
func tokens(w io.Writer, runs int, seed uint64) error {
	scopedV, err := packs.Builtin("mcq")
	if err != nil {
		return err
	}
	c := *scopedV.Contract
	c.Policy.ScopedRepair = false
	wholeV, err := validators.New(&c, packs.Builtins())
	if err != nil {
		return err
	}
	params, err := scopedV.Params(nil)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "item-scoped vs whole-document repair: %d runs per cell, seed %d, tokens = bytes/4\n", runs, seed)
	fmt.Fprintf(w, "output tokens = what the model must write, per answer ending valid; prompt tokens likewise\n\n")
	fmt.Fprintf(w, "%-10s %-7s | %13s %13s %7s | %13s %13s %7s | %9s %9s\n",
		"questions", "broken", "out scoped", "out whole", "ratio", "in scoped", "in whole", "ratio", "ok scoped", "ok whole")
	for _, n := range []int{5, 20, 50} {
		truthText := mcqgen.Questions(n)
		truth, err := strictjson.Parse([]byte(truthText))
		if err != nil {
			return err
		}
		for _, broken := range []int{1, 2, 5} {
			if broken > n {
				continue
			}
			var cells [2]tokenCell
			for r := 0; r < runs; r++ {
				rng := rand.New(rand.NewPCG(seed+uint64(r), uint64(n*100+broken)))
				text := breakAnswers(truth, rng.Perm(n)[:broken])
				task := "Write a test of " + strconv.Itoa(n) + " multiple-choice questions about Python lists, as JSON."
				for k, v := range []*validators.Validator{scopedV, wholeV} {
					m := costModel{newRepairer(truth, seed+uint64(r), uint64(n*100+broken))}
					out := repair.Run(context.Background(), repair.Job{
						Validator: v, Params: params, Text: text,
						Prompt: task,
						Model:  m,
						Rerun: func(ctx context.Context, _ float64) (repair.Reply, error) {
							out := reply(m.rerun(text))
							out.PromptTokens = len(task) / 4
							return out, nil
						},
					})
					cell := &cells[k]
					cell.n++
					if out.Status == repair.StatusRepaired || out.Status == repair.StatusValid {
						cell.valid++
					}
					cell.prompt += out.Tokens.PromptTokens
					cell.output += out.Tokens.OutputTokens
				}
			}
			per := func(c tokenCell, x int) float64 { return float64(x) / float64(max(c.valid, 1)) }
			s, wh := cells[0], cells[1]
			fmt.Fprintf(w, "%-10d %-7d | %13.0f %13.0f %6.1f%% | %13.0f %13.0f %6.1f%% | %9s %9s\n",
				n, broken,
				per(s, s.output), per(wh, wh.output), 100*per(s, s.output)/per(wh, wh.output),
				per(s, s.prompt), per(wh, wh.prompt), 100*per(s, s.prompt)/per(wh, wh.prompt),
				pct(s.valid, s.n), pct(wh.valid, wh.n))
		}
	}
	return nil
}

// breakAnswers returns truth as indented JSON with the answers of the
// given questions set one past their last option.
func breakAnswers(truth *strictjson.Value, items []int) string {
	doc := truth.Clone()
	qs := doc.Get("questions")
	for _, i := range items {
		q := qs.Items[i]
		_ = q.Replace("/answer", strictjson.Int(int64(len(q.Get("options").Items))))
	}
	return "```json\n" + string(strictjson.MarshalIndent(doc, "  ")) + "\n```"
}

// generate returns n answers made from one valid document of 10
// questions, each with the answers of 1 to 4 questions set past their
// options, the faults only a model can fix; the document is their truth,
// and the names say which questions are broken.
func generate(n int, seed uint64) (*strictjson.Value, []string, []string) {
	truth, err := strictjson.Parse([]byte(mcqgen.Questions(10)))
	if err != nil {
		panic(err) // mcqgen writes valid JSON
	}
	rng := rand.New(rand.NewPCG(seed, 10))
	texts, names := make([]string, n), make([]string, n)
	for i := range texts {
		broken := rng.Perm(10)[:1+rng.IntN(4)]
		texts[i] = breakAnswers(truth, broken)
		names[i] = fmt.Sprintf("generated_%03d_%v", i, broken)
	}
	return truth, texts, names
}
