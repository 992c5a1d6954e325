package access

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// ollamaRouteClasses is every route Ollama v0.17.4 registers in its
// server/routes.go, with its class. A route added there fails
// TestClassifyCoversOllamaRoutes until it is classified here and in
// Routes.
var ollamaRouteClasses = map[string]Class{
	"HEAD /":                            ClassRead,
	"GET /":                             ClassRead,
	"HEAD /api/version":                 ClassRead,
	"GET /api/version":                  ClassRead,
	"GET /api/status":                   ClassRead,
	"POST /api/pull":                    ClassManage,
	"POST /api/push":                    ClassManage,
	"HEAD /api/tags":                    ClassRead,
	"GET /api/tags":                     ClassRead,
	"POST /api/show":                    ClassModel,
	"DELETE /api/delete":                ClassManage,
	"POST /api/me":                      ClassAccount,
	"POST /api/signout":                 ClassAccount,
	"DELETE /api/user/keys/:encodedKey": ClassAccount,
	"POST /api/create":                  ClassManage,
	"POST /api/blobs/:digest":           ClassManage,
	"HEAD /api/blobs/:digest":           ClassManage,
	"POST /api/copy":                    ClassManage,
	"GET /api/experimental/aliases":     ClassManage,
	"POST /api/experimental/aliases":    ClassManage,
	"DELETE /api/experimental/aliases":  ClassManage,
	"GET /api/ps":                       ClassRead,
	"POST /api/generate":                ClassModel,
	"POST /api/chat":                    ClassModel,
	"POST /api/embed":                   ClassModel,
	"POST /api/embeddings":              ClassModel,
	"POST /v1/chat/completions":         ClassModel,
	"POST /v1/completions":              ClassModel,
	"POST /v1/embeddings":               ClassModel,
	"GET /v1/models":                    ClassRead,
	"GET /v1/models/:model":             ClassModel,
	"POST /v1/responses":                ClassModel,
	"POST /v1/images/generations":       ClassModel,
	"POST /v1/images/edits":             ClassModel,
	"POST /v1/messages":                 ClassModel,
}

// ollamaRoutes reads the route registrations of Ollama's server (the
// module go.mod requires, from the module cache): every r.GET, r.POST,
// r.HEAD, r.DELETE, … call with a literal path, as "METHOD /path".
func ollamaRoutes(t *testing.T) []string {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/ollama/ollama").Output()
	dir := strings.TrimSpace(string(out))
	if err != nil || dir == "" {
		t.Fatalf("go list -m github.com/ollama/ollama = %q, %v: run go mod download github.com/ollama/ollama", out, err)
	}
	file := filepath.Join(dir, "server", "routes.go")
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var routes []string
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		if x, ok := sel.X.(*ast.Ident); !ok || x.Name != "r" {
			return true
		}
		switch sel.Sel.Name {
		case "GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS":
		case "Any", "Handle", "Match", "Group", "Static", "StaticFS", "StaticFile", "NoRoute", "NoMethod":
			t.Errorf("%s: r.%s registers routes this test cannot list: classify them and teach the test", file, sel.Sel.Name)
			return true
		default:
			return true
		}
		lit, ok := call.Args[0].(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			t.Errorf("%s: r.%s with a path that is not a literal", file, sel.Sel.Name)
			return true
		}
		p, _ := strconv.Unquote(lit.Value)
		routes = append(routes, sel.Sel.Name+" "+p)
		return true
	})
	if len(routes) < 20 {
		t.Fatalf("%s: found %d routes, want Ollama's table (%q)", file, len(routes), routes)
	}
	return routes
}

// TestClassifyCoversOllamaRoutes: every route of Ollama's own table is
// classified, Routes holds exactly those, and Classify gives each its
// class; so a route a new Ollama adds fails here until it is classified.
func TestClassifyCoversOllamaRoutes(t *testing.T) {
	served := map[string]bool{}
	for _, r := range ollamaRoutes(t) {
		served[r] = true
		want, ok := ollamaRouteClasses[r]
		if !ok {
			t.Errorf("Ollama serves %s, which is not classified: add it to ollamaRouteClasses and Routes", r)
			continue
		}
		method, p, _ := strings.Cut(r, " ")
		concrete := strings.NewReplacer(":encodedKey", "abc", ":digest", "sha256:00", ":model", "m").Replace(p)
		ep := Classify(method, concrete)
		if ep.Class != want {
			t.Errorf("Classify(%s %s) = %q, want %q", method, concrete, ep.Class, want)
		}
		if wantManage := want == ClassManage || want == ClassAccount; ep.Manage != wantManage {
			t.Errorf("Classify(%s %s).Manage = %v, want %v", method, concrete, ep.Manage, wantManage)
		}
	}
	for r := range ollamaRouteClasses {
		if !served[r] {
			t.Errorf("%s is classified, but Ollama does not serve it", r)
		}
	}
	listed := map[string]bool{}
	for _, r := range Routes {
		k := r.Method + " " + r.Path
		if listed[k] {
			t.Errorf("Routes lists %s twice", k)
		}
		listed[k] = true
		if !served[k] {
			t.Errorf("Routes lists %s, which Ollama does not serve", k)
		}
	}
}

func TestClassify(t *testing.T) {
	tests := []struct {
		method, path string
		want         Class
		pathModel    string
	}{
		{"GET", "/", ClassRead, ""},
		{"GET", "/api/tags/", ClassRead, ""},
		{"OPTIONS", "/api/generate", ClassRead, ""},
		{"GET", "/v1/models/m:7b", ClassModel, "m:7b"},
		{"GET", "/v1/models/team/quiz", ClassModel, "team/quiz"},
		{"POST", "/v1/models/m", ClassUnknown, ""},
		{"GET", "/api/generate", ClassUnknown, ""},
		{"HEAD", "/api/ps", ClassUnknown, ""},
		{"POST", "/api/blobs", ClassUnknown, ""},
		{"POST", "/api/blobs/", ClassUnknown, ""},
		{"POST", "/API/generate", ClassUnknown, ""},
		{"POST", "/api/experimental/other", ClassUnknown, ""},
		{"DELETE", "/api/user/keys/k", ClassAccount, ""},
		{"DELETE", "/api/user/keys", ClassUnknown, ""},
		{"PUT", "/api/create", ClassUnknown, ""},
	}
	for _, tt := range tests {
		ep := Classify(tt.method, tt.path)
		if ep.Class != tt.want || ep.PathModel != tt.pathModel {
			t.Errorf("Classify(%s %s) = %q model %q, want %q model %q", tt.method, tt.path, ep.Class, ep.PathModel, tt.want, tt.pathModel)
		}
		if tt.want == ClassUnknown && (!ep.Manage || ep.Members == nil) {
			t.Errorf("Classify(%s %s) = %+v, want manage and its body's models read", tt.method, tt.path, ep)
		}
	}
}

// TestAuthorizeEveryModelTouched: a key reaches no model outside its
// globs through any member Ollama reads a model from — an alias's target
// and name, /api/create's from — and account, alias and unknown
// endpoints need manage, whatever model member the body carries.
func TestAuthorizeEveryModelTouched(t *testing.T) {
	const (
		alphaKey    = "cgk_alpha-0001"
		alphaOpsKey = "cgk_alpha-ops-0002"
		opsKey      = "cgk_ops-0003"
	)
	c, err := New(Config{Keys: []Key{
		{Name: "alpha", SHA256: Hash(alphaKey), Scope: Scope{Models: []string{"alpha*"}}},
		{Name: "alpha-ops", SHA256: Hash(alphaOpsKey), Scope: Scope{Models: []string{"alpha*"}, Manage: true}},
		{Name: "ops", SHA256: Hash(opsKey), Scope: Scope{Manage: true}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	key := func(k string) *Principal {
		p, err := c.Identify(header("Authorization", "Bearer "+k))
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	alpha, alphaOps, ops := key(alphaKey), key(alphaOpsKey), key(opsKey)
	const aliases = "/api/experimental/aliases"
	tests := []authorizeCase{
		{"alias to an outside model, decoy model member", alpha, "POST", aliases, `{"model":"alpha-x","alias":"alpha-x","target":"secret"}`, 403, ReasonManage},
		{"alias to an own model without manage", alpha, "POST", aliases, `{"alias":"alpha-x","target":"alpha-base"}`, 403, ReasonManage},
		{"alias to an outside model with manage", alphaOps, "POST", aliases, `{"alias":"alpha-x","target":"secret"}`, 403, ReasonModel},
		{"alias target in another case", alphaOps, "POST", aliases, `{"alias":"alpha-x","Target":"secret"}`, 403, ReasonModel},
		{"alias target twice", alphaOps, "POST", aliases, `{"alias":"alpha-x","target":"alpha-base","target":"secret"}`, 403, ReasonModel},
		{"alias named outside the globs", alphaOps, "POST", aliases, `{"alias":"secret","target":"alpha-base"}`, 403, ReasonModel},
		{"alias within the globs", alphaOps, "POST", aliases, `{"alias":"alpha-x","target":"alpha-base"}`, 200, ""},
		{"alias by prefix", alphaOps, "POST", aliases, `{"alias":"alpha","target":"alpha-base","prefix_matching":true}`, 403, ReasonModel},
		{"alias by prefix, folded member", alphaOps, "POST", aliases, `{"alias":"alpha","target":"alpha-base","Prefix_Matching":1}`, 403, ReasonModel},
		{"alias not by prefix", alphaOps, "POST", aliases, `{"alias":"alpha-x","target":"alpha-base","prefix_matching":false}`, 200, ""},
		{"alias by prefix with every model", ops, "POST", aliases, `{"alias":"a","target":"secret","prefix_matching":true}`, 200, ""},
		{"alias naming nothing", alphaOps, "POST", aliases, `{}`, 403, ReasonModel},
		{"delete an alias without manage", alpha, "DELETE", aliases, `{"model":"alpha-x","alias":"operators"}`, 403, ReasonManage},
		{"delete an outside alias", alphaOps, "DELETE", aliases, `{"alias":"operators"}`, 403, ReasonModel},
		{"delete an own alias", alphaOps, "DELETE", aliases, `{"alias":"alpha-x"}`, 200, ""},
		{"list aliases without manage", alpha, "GET", aliases, ``, 403, ReasonManage},
		{"whoami without manage", alpha, "POST", "/api/me", `{"model":"alpha-x"}`, 403, ReasonManage},
		{"sign out without manage", alpha, "POST", "/api/signout", `{"model":"alpha-x"}`, 403, ReasonManage},
		{"delete a user key without manage", alpha, "DELETE", "/api/user/keys/abc", `{"model":"alpha-x"}`, 403, ReasonManage},
		{"sign out with manage", ops, "POST", "/api/signout", ``, 200, ""},
		{"create without manage", alpha, "POST", "/api/create", `{"model":"alpha-clone","from":"alpha-base"}`, 403, ReasonManage},
		{"create from an outside model", alphaOps, "POST", "/api/create", `{"model":"alpha-clone","from":"secret"}`, 403, ReasonModel},
		{"create from, another case", alphaOps, "POST", "/api/create", `{"model":"alpha-clone","FROM":"secret"}`, 403, ReasonModel},
		{"create by name from an outside model", alphaOps, "POST", "/api/create", `{"name":"alpha-clone","from":"secret"}`, 403, ReasonModel},
		{"create from an own model", alphaOps, "POST", "/api/create", `{"model":"alpha-clone","from":"alpha-base"}`, 200, ""},
		{"create an outside model", alphaOps, "POST", "/api/create", `{"model":"secret","from":"alpha-base"}`, 403, ReasonModel},
		{"copy to an outside model", alphaOps, "POST", "/api/copy", `{"source":"alpha-base","destination":"secret"}`, 403, ReasonModel},
		{"unknown path without manage", alpha, "POST", "/api/brand-new", `{"model":"alpha-x"}`, 403, ReasonManage},
		{"unknown path naming an outside model", alphaOps, "POST", "/api/brand-new", `{"model":"alpha-x","target":"secret"}`, 403, ReasonModel},
		{"unknown path with every model", ops, "POST", "/api/brand-new", `{"model":"secret"}`, 200, ""},
		{"unknown method", alpha, "GET", "/api/generate", ``, 403, ReasonManage},
		{"generate in scope", alpha, "POST", "/api/generate", `{"model":"alpha-x"}`, 200, ""},
		{"status", alpha, "GET", "/api/status", ``, 200, ""},
		{"images in scope", alpha, "POST", "/v1/images/generations", `{"model":"alpha-x"}`, 200, ""},
		{"images out of scope", alpha, "POST", "/v1/images/edits", `{"model":"secret"}`, 403, ReasonModel},
	}
	runAuthorize(t, tests)
}

// FuzzNeedReadsWhatOllamaReads: whatever model Ollama's decoder
// (encoding/json, as gin's ShouldBindJSON) reads from an alias or create
// body — target, alias, from, model, name, prefix_matching — the access
// check reads too.
func FuzzNeedReadsWhatOllamaReads(f *testing.F) {
	for _, s := range []string{
		`{"alias":"a","target":"t"}`, `{"Alias":"a","TARGET":"t","prefix_matching":true}`,
		`{"target":"x","target":"t"}`, `{"model":"m","from":"f"}`, `{"name":"n","From":"f","from":"g"}`,
		`{"alias":"a","target":"t","prefix_matching":false}`, `[]`, ``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var alias struct {
			Alias          string `json:"alias"`
			Target         string `json:"target"`
			PrefixMatching bool   `json:"prefix_matching"`
		}
		if json.Unmarshal(raw, &alias) == nil {
			n, err := Classify("POST", "/api/experimental/aliases").Need(raw)
			if err == nil {
				for _, m := range []string{alias.Alias, alias.Target} {
					if m != "" && !slices.Contains(n.Models, m) {
						t.Errorf("Need(%q).Models = %q, lacks %q that Ollama reads", raw, n.Models, m)
					}
				}
				if alias.PrefixMatching && !n.AllModels {
					t.Errorf("Need(%q) misses prefix_matching", raw)
				}
			}
		}
		var create struct{ Model, Name, From string }
		if json.Unmarshal(raw, &create) == nil {
			n, err := Classify("POST", "/api/create").Need(raw)
			if err == nil {
				for _, m := range []string{create.Model, create.Name, create.From} {
					if m != "" && !slices.Contains(n.Models, m) {
						t.Errorf("Need(%q).Models = %q, lacks %q that Ollama reads", raw, n.Models, m)
					}
				}
			}
		}
	})
}
