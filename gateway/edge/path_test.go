package edge

import (
	"errors"
	"net/url"
	"path"
	"strings"
	"testing"

	"github.com/contractgateway/gateway/middleware/codec/apis"
)

func TestCanonicalPath(t *testing.T) {
	tests := []struct {
		in, decoded, canon string
		encSlash, bad      bool
	}{
		{"", "/", "/", false, false},
		{"/", "/", "/", false, false},
		{"/api/generate", "/api/generate", "/api/generate", false, false},
		{"/api/%67enerate", "/api/generate", "/api/generate", false, false},
		{"/v1/chat/%63ompletions", "/v1/chat/completions", "/v1/chat/completions", false, false},
		{"//api//generate", "/api/generate", "/api/generate", false, false},
		{"/api/./generate", "/api/generate", "/api/generate", false, false},
		{"/x/../api/generate", "/api/generate", "/api/generate", false, false},
		{"/../../api/generate", "/api/generate", "/api/generate", false, false},
		{"/api/%2e%2e/api/%2E/generate", "/api/generate", "/api/generate", false, false},
		{"/api/generate/", "/api/generate/", "/api/generate/", false, false},
		{"/api/generate/.", "/api/generate", "/api/generate", false, false},
		{"/api/..", "/", "/", false, false},
		{"/api/gen%2565rate", "/api/gen%65rate", "/api/gen%2565rate", false, false},
		{"/v1/models/a%20b:latest", "/v1/models/a b:latest", "/v1/models/a%20b:latest", false, false},
		{"/admin/requests/a%2Fb", "/admin/requests/a/b", "/admin/requests/a%2Fb", true, false},
		{"/api%2fgenerate", "/api/generate", "/api%2Fgenerate", true, false},
		{"/api/generate%00", "", "", false, true},
		{"/api/%0agenerate", "", "", false, true},
		{"/api/%7f", "", "", false, true},
		{"/api/%zz", "", "", false, true},
		{"api/generate", "", "", false, true},
	}
	for _, tt := range tests {
		decoded, canon, encSlash, err := canonicalPath(tt.in)
		if tt.bad {
			if !errors.Is(err, ErrBadPath) {
				t.Errorf("canonicalPath(%q) error = %v, want ErrBadPath", tt.in, err)
			}
			continue
		}
		if err != nil || decoded != tt.decoded || canon != tt.canon || encSlash != tt.encSlash {
			t.Errorf("canonicalPath(%q) = %q, %q, %v, %v; want %q, %q, %v", tt.in, decoded, canon, encSlash, err, tt.decoded, tt.canon, tt.encSlash)
		}
	}
}

// guardedRouteOf is the routing decision that matters for the guard and
// the virtual-model handling: which of their routes a decoded path is, or
// "" for pass-through.
func guardedRouteOf(p string) string {
	for _, cd := range apis.All() {
		if p == cd.Path() {
			return cd.Path()
		}
	}
	switch p {
	case "/api/tags", "/v1/models", "/api/show", "/api/pull", "/api/delete", "/api/copy", "/api/create":
		return p
	}
	if strings.HasPrefix(p, "/v1/models/") {
		return "/v1/models/*"
	}
	return ""
}

// cleanDecoded is Go's path.Clean of the decoded path, with ServeMux's
// trailing slash: the reference the canonical path is checked against.
func cleanDecoded(p string) string {
	np := path.Clean("/" + p)
	if strings.HasSuffix(p, "/") && np != "/" {
		np += "/"
	}
	return np
}

func FuzzCanonicalPath(f *testing.F) {
	for _, s := range []string{"/", "/api/generate", "/api/%67enerate", "//api//generate", "/x/../api/generate",
		"/api/%2e%2e/generate", "/api%2Fgenerate", "/api/generate%00", "/v1/chat/%63ompletions/", "/a/b/../../..",
		"/api/gen%2565rate", "/v1/models/a%20b:latest", "/%2e/%2E%2e/./api/pull"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		decoded, canon, encSlash, err := canonicalPath(p)
		if err != nil {
			return
		}
		d2, c2, s2, err := canonicalPath(canon)
		if err != nil || d2 != decoded || c2 != canon || s2 != encSlash {
			t.Fatalf("canonicalPath(%q) = %q, %q; again = %q, %q, %v: not idempotent", p, decoded, canon, d2, c2, err)
		}
		if strings.Contains(canon, "//") || !strings.HasPrefix(canon, "/") {
			t.Fatalf("canonicalPath(%q) = %q: empty segment or no leading /", p, canon)
		}
		for _, seg := range strings.Split(canon, "/") {
			if seg == "." || seg == ".." {
				t.Fatalf("canonicalPath(%q) = %q: dot segment", p, canon)
			}
		}
		if un, err := url.PathUnescape(canon); err != nil || un != decoded {
			t.Fatalf("canonicalPath(%q): %q decodes to %q (%v), want %q", p, canon, un, err, decoded)
		}
		if encSlash {
			return
		}
		un, err := url.PathUnescape(p)
		if err != nil {
			t.Fatalf("canonicalPath(%q) accepted a path url.PathUnescape refuses: %v", p, err)
		}
		if ref := cleanDecoded(un); decoded != ref || guardedRouteOf(decoded) != guardedRouteOf(ref) {
			t.Fatalf("canonicalPath(%q) = %q (route %q), cleaned decoded path %q (route %q)", p, decoded, guardedRouteOf(decoded), ref, guardedRouteOf(ref))
		}
	})
}
