// Command testsum reads `go test -json` on its standard input, prints what
// `go test` without -json prints (a line per package, the output of
// failed tests, build errors) and ends with one line counting the tests
// that passed, failed and were skipped. It exits 1 when a test, a package
// or a build failed, or when the input was not go test's, so that
//
//	set -o pipefail; go test -json ./... | go run ./internal/testsum
//
// keeps the exit status of go test.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
)

func main() {
	os.Exit(run(os.Stdin, os.Stdout))
}

// event is one line of `go test -json` (cmd/test2json's TestEvent).
type event struct {
	Action     string
	Package    string
	Test       string
	Output     string
	ImportPath string // build-output and build-fail events
}

// counts are the tests seen by their outcome. Subtests count as tests:
// each is a case a reader of the output may be told failed.
type counts struct {
	passed, failed, skipped int
	packagesFailed          int
	buildFailed             int
}

func (c counts) String() string {
	s := fmt.Sprintf("tests: %d passed, %d failed, %d skipped", c.passed, c.failed, c.skipped)
	if c.packagesFailed > 0 || c.buildFailed > 0 {
		s += fmt.Sprintf(" (%d packages failed, %d builds failed)", c.packagesFailed, c.buildFailed)
	}
	return s
}

// run copies in to out as plain `go test` would print it, then the
// counting line, and returns the exit code.
func run(in io.Reader, out io.Writer) int {
	var c counts
	// A test's output is held until its end: printed when it failed,
	// dropped when it passed or was skipped, as go test without -v does.
	held := map[string][]string{}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	bad := false
	for sc.Scan() {
		line := sc.Bytes()
		var ev event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &ev) != nil {
			// go test prints what it cannot attribute (a panic before
			// the test binary's framing, a vet failure) as plain text.
			fmt.Fprintf(out, "%s\n", line)
			continue
		}
		key := ev.Package + "\x00" + ev.Test
		switch ev.Action {
		case "build-output":
			io.WriteString(out, ev.Output)
		case "build-fail":
			c.buildFailed++
		case "output":
			if ev.Test == "" {
				if ev.Output != "PASS\n" {
					io.WriteString(out, ev.Output)
				}
				continue
			}
			if strings.HasPrefix(ev.Output, "=== ") {
				continue // RUN, PAUSE, CONT, NAME: -v's framing
			}
			held[key] = append(held[key], ev.Output)
		case "pass", "fail", "skip":
			if ev.Test == "" {
				if ev.Action == "fail" {
					c.packagesFailed++
				}
				continue
			}
			switch ev.Action {
			case "pass":
				c.passed++
			case "fail":
				c.failed++
				for _, o := range held[key] {
					io.WriteString(out, o)
				}
			case "skip":
				c.skipped++
			}
			delete(held, key)
		}
	}
	if err := sc.Err(); err != nil {
		fmt.Fprintf(out, "testsum: reading go test -json: %v\n", err)
		bad = true
	}
	fmt.Fprintln(out, c)
	if bad || c.failed > 0 || c.packagesFailed > 0 || c.buildFailed > 0 {
		return 1
	}
	return 0
}
