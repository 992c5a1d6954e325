package debugstore

import (
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/contractgateway/gateway/middleware"
	"github.com/contractgateway/gateway/validators"
)

func record(id, first string) middleware.Record {
	return middleware.Record{RequestID: id, Time: time.Now(), Contract: "c", Model: "m", Status: "repaired", First: first, Final: first}
}

func TestDebugStoreTTL(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, err := New(0, time.Minute, nil)
		if err != nil {
			t.Fatal(err)
		}
		s.Add(record("a", `{}`))
		time.Sleep(30 * time.Second)
		s.Add(record("b", `{}`))
		time.Sleep(29 * time.Second)
		if _, ok := s.Get("a"); !ok {
			t.Fatal("a gone before its TTL")
		}
		time.Sleep(2 * time.Second)
		if _, ok := s.Get("a"); ok {
			t.Error("a kept after its TTL")
		}
		if _, ok := s.Get("b"); !ok {
			t.Error("b gone before its TTL")
		}
		time.Sleep(30 * time.Second)
		if n := len(s.List("", "", "", 10)); n != 0 {
			t.Errorf("%d kept after every TTL", n)
		}
		if b, n := s.Usage(); b != 0 || n != 0 {
			t.Errorf("usage = %d bytes, %d entries after expiry", b, n)
		}
	})
}

func TestDebugStoreBytes(t *testing.T) {
	s, err := New(1, time.Hour, nil)
	if err != nil {
		t.Fatal(err)
	}
	s.Add(record("a", `{}`))
	if _, n := s.Usage(); n != 0 {
		t.Fatal("a record larger than the store was kept")
	}
	s, _ = New(1000, time.Hour, nil)
	big := `"` + strings.Repeat("x", 300) + `"`
	for _, id := range []string{"a", "b", "c"} {
		s.Add(record(id, big))
	}
	bytes, n := s.Usage()
	if bytes > 1000 || n != 1 {
		t.Errorf("usage = %d bytes, %d entries; want ≤ 1000 and 1", bytes, n)
	}
	if _, ok := s.Get("c"); !ok {
		t.Error("newest evicted")
	}
	if _, ok := s.Get("a"); ok {
		t.Error("oldest kept")
	}
}

func TestDebugStoreRedacts(t *testing.T) {
	s, err := New(0, time.Hour, []string{"/user/email", "items[*].name"})
	if err != nil {
		t.Fatal(err)
	}
	rec := record("r", `{"user":{"email":"a@b.c","id":1},"items":[{"name":"x","n":1},{"name":"y","n":2}]}`)
	rec.First = "Sure: {broken a@b.c"
	rec.Before = validators.Report{Violations: []validators.Violation{
		{Code: "X", Path: "user.email", Actual: "a@b.c"}, {Code: "Y", Path: "user.id", Actual: 1.0},
		{Code: "JSON_SYNTAX", Path: "1:9", Actual: "a@b.c"}}}
	rec.Corrections = []middleware.Correction{{Path: "items[1].name", Before: "y", After: "z"}, {Path: "items[1].n", Before: 2, After: 3}}
	s.Add(rec)
	got, ok := s.Get("r")
	if !ok {
		t.Fatal("not kept")
	}
	if want := `{"user":{"email":"[redacted]","id":1},"items":[{"name":"[redacted]","n":1},{"name":"[redacted]","n":2}]}`; got.Final != want {
		t.Errorf("final = %s\nwant    %s", got.Final, want)
	}
	if got.First != redacted {
		t.Errorf("unparsed first = %q, want it blanked", got.First)
	}
	acts := []any{}
	for _, v := range got.Before.Violations {
		acts = append(acts, v.Actual)
	}
	if diff := cmp.Diff([]any{redacted, 1.0, redacted}, acts); diff != "" {
		t.Errorf("report actuals (-want +got):\n%s", diff)
	}
	if got.Corrections[0].Before != redacted || got.Corrections[1].Before != 2 {
		t.Errorf("corrections = %+v", got.Corrections)
	}
	if _, err := New(0, 0, []string{"/a/~2"}); err == nil {
		t.Error("bad pointer accepted")
	}
}

// TestDebugStoreClaim gives an id out once while it is in flight or kept,
// and keeps both records when one lands under an id given out again (a
// coalesced run that outlived its request).
func TestDebugStoreClaim(t *testing.T) {
	s, err := New(0, time.Hour, nil)
	if err != nil {
		t.Fatal(err)
	}
	a, releaseA := s.claim("x")
	b, releaseB := s.claim("x")
	if a != "x" || b == "x" || b == "" {
		t.Errorf("claims in flight = %q, %q; want x and a fresh id", a, b)
	}
	releaseB()
	s.Add(record("x", `{"n":1}`))
	releaseA()
	if c, release := s.claim("x"); c == "x" {
		t.Errorf("claim of a kept id = %q, want a fresh id", c)
	} else {
		release()
	}
	s.Add(record("x", `{"n":2}`))
	if got, _ := s.Get("x"); got.First != `{"n":2}` {
		t.Errorf("get = %s, want the newest", got.First)
	}
	if n := len(s.List("", "", "", 10)); n != 2 {
		t.Errorf("list has %d records, want both", n)
	}
	if c, release := s.claim("y"); c != "y" {
		t.Errorf("claim of a free id = %q", c)
	} else {
		release()
	}
}
