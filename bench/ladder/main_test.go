package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestRunInflight runs the bench on a few generated answers and checks
// that it reports the in-flight columns and the calls and tokens per
// answer side by side.
func TestRunInflight(t *testing.T) {
	var out bytes.Buffer
	if err := run([]string{"-generated", "6", "-fix", "0.5"}, &out); err != nil {
		t.Fatalf("run: %v", err)
	}
	for _, want := range []string{"stream", "no stream", "model calls per answer, mean", "model calls per answer, max", "answers past the policy's budget", "prompt tokens per answer", "output tokens per answer", "fix 0.50"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("run printed no %q:\n%s", want, out.String())
		}
	}
}
