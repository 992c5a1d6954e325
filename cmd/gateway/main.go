// Command gateway is Contract Gateway: an Ollama-compatible gateway that
// returns strict, contract-valid JSON from local models, and the command
// line tools around its contract engine (validate, repair, contracts).
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		// Once shutdown has begun, the signals' default action is back: a
		// second SIGINT or SIGTERM ends the process at once, as an
		// operator pressing Ctrl-C twice expects, instead of waiting out
		// the delay and the grace.
		<-ctx.Done()
		stop()
	}()
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(exitCode(err, os.Stderr))
}

// exitError carries a process exit code through run's error return, so that
// run stays testable and main is the only place that exits.
type exitError struct {
	code int
	err  error // printed to stderr when non-nil
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

// usageError is exit code 2 with a message.
func usageError(format string, args ...any) error {
	return &exitError{code: 2, err: fmt.Errorf(format, args...)}
}

// exitCode prints err (if it has a message) and maps it to a code:
// 0 success, the code of an exitError, 1 otherwise.
func exitCode(err error, stderr io.Writer) int {
	if err == nil {
		return 0
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil {
			fmt.Fprintln(stderr, "gateway:", ee.err)
		}
		return ee.code
	}
	fmt.Fprintln(stderr, "gateway:", err)
	return 1
}

const usage = `usage:
  gateway [serve] [--config FILE] [--listen ADDR] [--upstream URL | --upstreams URL,URL…] [--contracts DIR]
  gateway validate --contract NAME [--param k=v]… [--schema FILE] [FILE|-]
  gateway repair --offline --contract NAME [--param k=v]… [--schema FILE] [--report FILE] [FILE|-]
  gateway repair --contract NAME --ollama URL --model MODEL [--param k=v]… [--prompt FILE] [--report FILE] [FILE|-]
  gateway contracts [list | show NAME | lint DIR]
  gateway keys new NAME
  gateway outcomes export --since TIME [--until TIME] [--format jsonl|csv] [--config FILE]
  gateway help

serve (the default) runs the gateway; validate prints the violation report of
a model's output; repair brings it into contract, locally with --offline or
with the model at --ollama; contracts lists, shows and lints contracts; keys new
prints a fresh API key, once, and the config lines that admit it; outcomes
export prints the outcome store's records, newest first.
Environment: GATEWAY_CONFIG, GATEWAY_LISTEN, GATEWAY_UPSTREAM, GATEWAY_UPSTREAMS,
GATEWAY_CONTRACTS, GATEWAY_ADMIN_TOKEN, GATEWAY_MAX_BODY_BYTES, GATEWAY_LOG_LEVEL,
GATEWAY_LOG_FORMAT, GATEWAY_OUTCOMES_SQLITE, GATEWAY_OUTCOMES_POSTGRES.
Each command's flags: gateway COMMAND --help.

`

// run is the whole program: main only wires the process to it.
func run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	cmd := "serve"
	if len(args) == 1 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help") {
		// The program's help, not serve's: serve is only the default.
		cmd = "help"
	} else if len(args) > 0 && (args[0] == "" || args[0][0] != '-') {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "serve":
		return cmdServe(ctx, args, getenv, stdout, stderr)
	case "validate":
		return cmdValidate(args, getenv, stdin, stdout, stderr)
	case "repair":
		return cmdRepair(ctx, args, getenv, stdin, stdout, stderr)
	case "contracts":
		return cmdContracts(args, getenv, stdout, stderr)
	case "keys":
		return cmdKeys(args, stdout, stderr)
	case "outcomes":
		return cmdOutcomes(ctx, args, getenv, stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	return usageError("unknown command %q\n%s", cmd, usage)
}
