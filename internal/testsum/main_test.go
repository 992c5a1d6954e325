package main

import (
	"strings"
	"testing"
)

func TestRun(t *testing.T) {
	const pass = `{"Action":"start","Package":"p"}
{"Action":"run","Package":"p","Test":"TestA"}
{"Action":"output","Package":"p","Test":"TestA","Output":"=== RUN   TestA\n"}
{"Action":"output","Package":"p","Test":"TestA","Output":"    a_test.go:9: chatter\n"}
{"Action":"output","Package":"p","Test":"TestA","Output":"--- PASS: TestA (0.00s)\n"}
{"Action":"pass","Package":"p","Test":"TestA"}
{"Action":"run","Package":"p","Test":"TestA/sub"}
{"Action":"pass","Package":"p","Test":"TestA/sub"}
{"Action":"output","Package":"p","Test":"TestS","Output":"--- SKIP: TestS (0.00s)\n"}
{"Action":"skip","Package":"p","Test":"TestS"}
{"Action":"output","Package":"p","Output":"PASS\n"}
{"Action":"output","Package":"p","Output":"ok  \tp\t0.01s\n"}
{"Action":"pass","Package":"p"}
{"Action":"output","Package":"q","Output":"?   \tq\t[no test files]\n"}
{"Action":"skip","Package":"q"}
`
	const fail = `{"Action":"run","Package":"p","Test":"TestB"}
{"Action":"output","Package":"p","Test":"TestB","Output":"=== RUN   TestB\n"}
{"Action":"output","Package":"p","Test":"TestB","Output":"    b_test.go:3: got 1, want 2\n"}
{"Action":"output","Package":"p","Test":"TestB","Output":"--- FAIL: TestB (0.00s)\n"}
{"Action":"fail","Package":"p","Test":"TestB"}
{"Action":"output","Package":"p","Output":"FAIL\n"}
{"Action":"output","Package":"p","Output":"FAIL\tp\t0.01s\n"}
{"Action":"fail","Package":"p"}
`
	const build = `{"ImportPath":"r [r.test]","Action":"build-output","Output":"r/x.go:3:1: syntax error\n"}
{"ImportPath":"r [r.test]","Action":"build-fail"}
{"Action":"output","Package":"r","Output":"FAIL\tr [build failed]\n"}
{"Action":"fail","Package":"r"}
`
	tests := []struct {
		name     string
		in       string
		code     int
		want     string
		wantNone []string
	}{
		{"all pass", pass, 0, "ok  \tp\t0.01s\n?   \tq\t[no test files]\ntests: 2 passed, 0 failed, 1 skipped\n", nil},
		{"a failure shows its output", pass + fail, 1,
			"ok  \tp\t0.01s\n?   \tq\t[no test files]\n    b_test.go:3: got 1, want 2\n--- FAIL: TestB (0.00s)\nFAIL\nFAIL\tp\t0.01s\ntests: 2 passed, 1 failed, 1 skipped (1 packages failed, 0 builds failed)\n", nil},
		{"a build failure", build, 1,
			"r/x.go:3:1: syntax error\nFAIL\tr [build failed]\ntests: 0 passed, 0 failed, 0 skipped (1 packages failed, 1 builds failed)\n", nil},
		{"plain text passes through", "no test json here\n", 0, "no test json here\ntests: 0 passed, 0 failed, 0 skipped\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out strings.Builder
			code := run(strings.NewReader(tt.in), &out)
			if code != tt.code || out.String() != tt.want {
				t.Errorf("run() = %d\n%s\nwant %d\n%s", code, out.String(), tt.code, tt.want)
			}
		})
	}
}
