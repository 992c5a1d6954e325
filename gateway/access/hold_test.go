package access

import (
	"context"
	"net/http"
	"testing"
)

// TestLimiterHold: work held after a request ended counts as a request in
// flight, even past the Concurrent limit, until it is done, and its
// tokens are charged then.
func TestLimiterHold(t *testing.T) {
	l := NewLimiter(LimiterOptions{})
	p := principal(Limits{Concurrent: 1, TokensPerMinute: 10})
	if status, _ := admit(t, l, p, 0); status != http.StatusOK {
		t.Fatalf("first request = %d, want 200", status)
	}
	done := l.Hold(context.Background(), p)
	second := l.Hold(context.Background(), p) // past the limit: held all the same
	second(0)
	if status, _ := admit(t, l, p, 0); status != http.StatusTooManyRequests {
		t.Errorf("request while work is held = %d, want 429", status)
	}
	done(20)
	done(20) // once only
	if status, retry := admit(t, l, p, 0); status != http.StatusTooManyRequests || retry != "60" {
		t.Errorf("request after the held work spent 20 of 10 tokens a minute = %d, Retry-After %q, want 429, 60", status, retry)
	}
}
