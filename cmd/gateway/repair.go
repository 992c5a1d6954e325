package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/contractgateway/gateway/repair"
	"github.com/contractgateway/gateway/validators"
	"github.com/contractgateway/gateway/validators/strictjson"
)

// repairReport is what --report FILE receives.
type repairReport struct {
	Valid      bool                   `json:"valid"`
	Status     string                 `json:"status"`
	LLMCalls   int                    `json:"llm_calls"`
	Changes    []repair.Change        `json:"changes"`
	Violations []validators.Violation `json:"violations"`
}

// cmdRepair implements `gateway repair`: with --offline, local repair only;
// otherwise the whole ladder against --ollama URL and --model M. The
// repaired document goes to stdout with exit 0, or nothing and exit 1.
func cmdRepair(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("repair", stderr)
	var cf contractFlags
	cf.register(fs, getenv)
	offline := fs.Bool("offline", false, "local repair only: no model calls")
	reportFile := fs.String("report", "", "write the change log and remaining violations to `FILE`")
	ollamaURL := fs.String("ollama", "", "Ollama base `URL` for LLM repair (without --offline)")
	model := fs.String("model", "", "`MODEL` for LLM repair (without --offline)")
	promptFile := fs.String("prompt", "", "the original request's prompt, in `FILE`, for partial regeneration")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if !*offline && (*ollamaURL == "" || *model == "") {
		return usageError("repair needs --offline, or --ollama URL and --model M for the full ladder")
	}
	v, params, in, err := cf.input(pos, stdin)
	if err != nil {
		return err
	}
	var out repair.Outcome
	if *offline {
		local := repair.Local(v, string(in), params)
		out = repair.Outcome{Before: local.Before, Report: local.Report, Doc: local.Doc, Changes: local.Changes, Status: repair.StatusFailed}
		if local.Report.Valid {
			out.Status = repair.StatusRepaired
		}
	} else {
		prompt := ""
		if *promptFile != "" {
			b, err := os.ReadFile(*promptFile)
			if err != nil {
				return usageError("%v", err)
			}
			prompt = string(b)
		}
		m, err := newCLIModel(*ollamaURL, *model)
		if err != nil {
			return usageError("%v", err)
		}
		out = repair.Run(ctx, repair.Job{Validator: v, Params: params, Text: string(in), Prompt: prompt, Model: m})
	}
	if *reportFile != "" {
		changes := out.Changes
		if changes == nil {
			changes = []repair.Change{}
		}
		rep := repairReport{Valid: out.Report.Valid, Status: out.Status, LLMCalls: out.LLMCalls, Changes: changes, Violations: out.Report.Violations}
		f, err := os.Create(*reportFile)
		if err != nil {
			return &exitError{code: 2, err: err}
		}
		werr := writeJSON(f, rep)
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			return werr
		}
	}
	if !out.Report.Valid || out.Doc == nil {
		fmt.Fprintf(stderr, "gateway: repair: not valid after repair: %d violation(s) remain\n", len(out.Report.Violations))
		return &exitError{code: 1}
	}
	_, err = fmt.Fprintf(stdout, "%s\n", strictjson.Marshal(out.Doc))
	return err
}
