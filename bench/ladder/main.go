// Command ladder runs the repair ladder over a corpus of faulty MCQ answers
// with a scripted imperfect model and prints, side by side for local repair
// alone, for the whole ladder on the whole answer, and for the answer
// released progressively as the guard releases an item contract's (to a
// client that streams it, and to one that does not): the share of answers
// ending valid, the mean and maximum model calls per answer, the answers
// whose calls went past the contract policy's budget (its max_repairs,
// one partial regeneration and its re-runs), the tokens per answer, the
// share fixed without any model call, and how often each rung ran. Run it
// from the module root:
//
//	go run ./bench/ladder [-runs 20] [-seed 1] [-fix 0.7] [-collateral] [-generated 120] [-v]
//	go run ./bench/ladder -blind [-runs 20]
//	go run ./bench/ladder -tokens [-runs 200]
//
// With -fix the model fixes each violation it is shown with that
// probability; with -collateral it also rewrites the explanation of a
// question it was asked to repair (the held-out model of -blind), an edit
// inside a flagged item that the blind merge undoes. With -generated the
// answers are not the corpus but N documents of 10 questions, 1 to 4 of
// them with an answer index past their options: every answer needs the
// model. The progressive columns feed the answer line by line to the
// release, whose calls wait for a one-slot model until the answer is
// complete, and then go on as the guard does (the ladder takes over an
// answer nobody saw an item of).
//
// With -tokens it compares item-scoped with whole-document repair on
// generated documents of 5, 20 and 50 questions with 1, 2 and 5 broken
// answers: the tokens asked of the model (a reply costs its bytes / 4) per
// answer ending valid, side by side with their ratio, and the success
// rates.
//
// With -blind it measures the blind merge instead: a held-out model that
// also rephrases the explanation of a question it was asked to repair, and
// the share of those rewrites that reach the answer.
//
// The corpus is written by repair/testdata/ladder/gen.go. The model fixes
// each violation it is shown with probability 0.7, sometimes rephrases a
// question it was not asked to touch, sometimes wraps its JSON in prose,
// regenerates a named item right with probability 0.8, sometimes ignores
// the indices, and answers a re-run validly with probability 0.6; every
// draw comes from a generator seeded per run and case, so a run is
// reproducible.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/contractgateway/gateway/repair"
	"github.com/contractgateway/gateway/validators/packs"
	"github.com/contractgateway/gateway/validators/strictjson"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "ladder:", err)
		os.Exit(1)
	}
}

// config is one column of the comparison: local repair alone, the ladder
// on the whole answer, or the progressive release of the answer and the
// ladder after it (inflight), to a client that streams or not.
type config struct {
	name      string
	localOnly bool
	inflight  bool
	stream    bool
}

// tally sums the outcomes of one configuration.
type tally struct {
	n, valid, zeroCall, calls, maxCalls, restored, fields int
	// over counts the answers whose calls went past the policy's budget;
	// inflight is the most calls of an answer the progressive release
	// sent items of or called the model for (the others went through the
	// ladder whole, as in the ladder's column).
	over, inflight int
	tokens         repair.Usage
	status         map[string]int
	rungs          map[string]int
}

func run(args []string, w io.Writer) error {
	fs := flag.NewFlagSet("ladder", flag.ContinueOnError)
	corpus := fs.String("corpus", "repair/testdata/ladder/corpus", "`DIR` of faulty answers (*.txt)")
	runs := fs.Int("runs", 1, "runs over the corpus, each with other draws")
	seed := fs.Uint64("seed", 1, "seed of the first run")
	verbose := fs.Bool("v", false, "print one line per answer of the whole ladder")
	tok := fs.Bool("tokens", false, "compare the tokens of item-scoped and whole-document repair on generated documents")
	blind := fs.Bool("blind", false, "measure the blind merge with a model that rewrites the explanation of a question it repairs")
	fix := fs.Float64("fix", defaultOdds.Fix, "probability that a repair call fixes each violation it is shown")
	collateral := fs.Bool("collateral", false, "the model also rewrites the explanation of a question it repairs")
	generated := fs.Int("generated", 0, "instead of the corpus, `N` generated answers of 10 questions, 1 to 4 of them with an answer past their options")
	if err := fs.Parse(args); err != nil {
		return err
	}
	odds := defaultOdds
	odds.Fix = *fix
	if *tok {
		return tokens(w, *runs, *seed)
	}
	v, err := packs.Builtin("mcq")
	if err != nil {
		return err
	}
	params, err := v.Params(nil)
	if err != nil {
		return err
	}
	var (
		truth        *strictjson.Value
		texts, files []string
	)
	if *generated > 0 {
		*corpus = "generated"
		truth, texts, files = generate(*generated, *seed)
	} else if truth, texts, files, err = readCorpus(*corpus, v.Contract.Fixtures["valid_python_basics_en.json"]); err != nil {
		return err
	}

	if *blind {
		blindMerge(w, v, params, truth, texts, *runs, *seed)
		return nil
	}

	configs := []config{{name: "local only", localOnly: true}, {name: "ladder"}, {name: "stream", inflight: true, stream: true}, {name: "no stream", inflight: true}}
	policy := v.Contract.Policy
	budget := policy.MaxRepairs + len(policy.Temperatures)
	if policy.PartialRegeneration {
		budget++
	}
	tallies := make([]tally, len(configs))
	for k, cfg := range configs {
		t := &tallies[k]
		t.status, t.rungs = map[string]int{}, map[string]int{}
		for r := 0; r < *runs; r++ {
			for i, text := range texts {
				base := newRepairer(truth, *seed+uint64(r), uint64(i))
				base.odds = odds
				var model repair.Model = priced{base}
				if *collateral {
					model = priced{&rephraser{repairer: base}}
				}
				job := repair.Job{
					Validator: v, Params: params, Text: text,
					Prompt: "Write a test of 10 multiple-choice questions about Python basics for beginners, as JSON.",
					Model:  model, LocalOnly: cfg.localOnly,
					Rerun: func(ctx context.Context, _ float64) (repair.Reply, error) { return reply(base.rerun(text)), nil },
				}
				var out repair.Outcome
				if cfg.inflight {
					var released bool
					out, released = inflight(context.Background(), job, cfg.stream)
					if released {
						t.inflight = max(t.inflight, out.LLMCalls)
					}
				} else {
					out = repair.Run(context.Background(), job)
				}
				t.add(out)
				if out.LLMCalls > budget {
					t.over++
				}
				if *verbose && !cfg.localOnly {
					fmt.Fprintf(w, "%-10s run %d %-42s %-8s calls %d restored %d rungs %s\n", cfg.name, r, filepath.Base(files[i]), out.Status, out.LLMCalls, out.Restored, strings.Join(out.Rungs, ","))
				}
			}
		}
	}

	fmt.Fprintf(w, "corpus %s: %d answers x %d runs, seed %d, fix %.2f, collateral %v\n", *corpus, len(texts), *runs, *seed, odds.Fix, *collateral)
	fmt.Fprintf(w, "policy budget: %d calls (max_repairs %d, partial regeneration %v, %d re-runs); tokens = bytes/4\n\n",
		budget, policy.MaxRepairs, policy.PartialRegeneration, len(policy.Temperatures))
	fmt.Fprintf(w, "%-34s", "")
	for _, cfg := range configs {
		fmt.Fprintf(w, "%14s", cfg.name)
	}
	fmt.Fprintln(w)
	row := func(label string, f func(t tally) string) {
		fmt.Fprintf(w, "%-34s", label)
		for _, t := range tallies {
			fmt.Fprintf(w, "%14s", f(t))
		}
		fmt.Fprintln(w)
	}
	row("ending valid", func(t tally) string { return pct(t.valid, t.n) })
	row("fixed with zero model calls", func(t tally) string { return pct(t.zeroCall, t.n) })
	row("model calls per answer, mean", func(t tally) string { return fmt.Sprintf("%.2f", float64(t.calls)/float64(t.n)) })
	row("model calls per answer, max", func(t tally) string { return fmt.Sprint(t.maxCalls) })
	row("  max, released in flight", func(t tally) string { return fmt.Sprint(t.inflight) })
	row("answers past the policy's budget", func(t tally) string { return fmt.Sprint(t.over) })
	row("prompt tokens per answer", func(t tally) string { return fmt.Sprintf("%.0f", float64(t.tokens.PromptTokens)/float64(t.n)) })
	row("output tokens per answer", func(t tally) string { return fmt.Sprintf("%.0f", float64(t.tokens.OutputTokens)/float64(t.n)) })
	row("items restored by merge", func(t tally) string { return fmt.Sprint(t.restored) })
	row("fields restored by merge", func(t tally) string { return fmt.Sprint(t.fields) })
	for _, s := range []string{repair.StatusValid, repair.StatusRepaired, repair.StatusFallback, repair.StatusFailed} {
		row("status "+s, func(t tally) string { return fmt.Sprint(t.status[s]) })
	}
	var rungs []string
	for k := range tallies[len(tallies)-1].rungs {
		rungs = append(rungs, k)
	}
	sort.Strings(rungs)
	for _, rg := range rungs {
		row("rung "+rg, func(t tally) string { return fmt.Sprint(t.rungs[rg]) })
	}
	lo, full := tallies[0], tallies[1]
	if lo.valid > 0 {
		fmt.Fprintf(w, "\nladder / local only, answers ending valid: %.2fx\n", float64(full.valid)/float64(lo.valid))
	}
	return nil
}

func (t *tally) add(out repair.Outcome) {
	t.n++
	ok := out.Status == repair.StatusValid || out.Status == repair.StatusRepaired
	if ok {
		t.valid++
		if out.LLMCalls == 0 {
			t.zeroCall++
		}
	}
	t.calls += out.LLMCalls
	t.tokens.PromptTokens += out.Tokens.PromptTokens
	t.tokens.OutputTokens += out.Tokens.OutputTokens
	t.maxCalls = max(t.maxCalls, out.LLMCalls)
	t.restored += out.Restored
	t.fields += out.RestoredFields
	t.status[out.Status]++
	for _, r := range out.Rungs {
		t.rungs[r]++
	}
}

func pct(a, n int) string {
	if n == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(a)/float64(n))
}

// readCorpus reads the faulty answers of dir and the document they were
// made from.
func readCorpus(dir string, fixture []byte) (*strictjson.Value, []string, []string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.txt"))
	if err != nil || len(files) == 0 {
		return nil, nil, nil, fmt.Errorf("no corpus in %s (run go run repair/testdata/ladder/gen.go)", dir)
	}
	sort.Strings(files)
	truth, err := strictjson.Parse(fixture)
	if err != nil {
		return nil, nil, nil, err
	}
	texts := make([]string, len(files))
	for i, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, nil, nil, err
		}
		texts[i] = string(b)
	}
	return truth, texts, files, nil
}
