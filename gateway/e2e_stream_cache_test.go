package gateway

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// TestGuardStreamsCacheHitItemByItem checks that a cache hit of an item
// contract reaches a stream client as a live stream would: each item a
// delta of its own, the deltas one document equal to the first answer's,
// the summary saying hit.
func TestGuardStreamsCacheHitItemByItem(t *testing.T) {
	valid := readFixture(t, "mcq_valid.json")
	up := &scriptedUpstream{answers: []string{readFixture(t, "mcq_derivable.txt")}}
	gw := newGuardedGateway(t, up, nil)
	var texts []string
	for _, want := range []string{"miss", "hit"} {
		resp, body := post(t, gw.URL+"/api/generate", `{"model":"m","prompt":"quiz"}`, map[string]string{"X-Contract": "mcq"})
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("status %d: %s", resp.StatusCode, body)
		}
		var text strings.Builder
		deltas := 0
		var last map[string]any
		sc := bufio.NewScanner(strings.NewReader(string(body)))
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			if err := json.Unmarshal(sc.Bytes(), &last); err != nil {
				t.Fatalf("line %q: %v", sc.Text(), err)
			}
			if s, _ := last["response"].(string); s != "" {
				text.WriteString(s)
				deltas++
			}
		}
		if deltas < 3 {
			t.Errorf("%s: %d text deltas, want one per question and the close", want, deltas)
		}
		sameJSON(t, valid, text.String())
		if c, _ := last["contract"].(map[string]any); c == nil || c["cache"] != want {
			t.Errorf("final chunk = %v, want contract summary with cache %s", last, want)
		}
		texts = append(texts, text.String())
	}
	if texts[0] != texts[1] {
		t.Errorf("the hit streamed %q, the miss %q", texts[1], texts[0])
	}
	if n := len(up.requests()); n != 1 {
		t.Errorf("%d upstream calls, want 1", n)
	}
}
