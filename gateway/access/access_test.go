package access

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/contractgateway/gateway/middleware/apierr"
)

const (
	quizKey  = "cgk_quiz-secret-0001"
	adminKey = "cgk_admin-secret-0002"
)

func testChecker(t *testing.T, anon *Scope) *Checker {
	t.Helper()
	c, err := New(Config{
		Keys: []Key{
			{Name: "quiz-app", SHA256: Hash(quizKey), Scope: Scope{Models: []string{"quiz", "llama3.2*"}}},
			{Name: "ops", SHA256: Hash(adminKey), Scope: Scope{Manage: true}},
		},
		Anonymous: anon,
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func header(kv ...string) http.Header {
	h := http.Header{}
	for i := 0; i < len(kv); i += 2 {
		h.Add(kv[i], kv[i+1])
	}
	return h
}

func status(err error) int {
	if err == nil {
		return http.StatusOK
	}
	var e *apierr.Error
	if !errors.As(err, &e) {
		return -1
	}
	return e.Status()
}

func TestIdentify(t *testing.T) {
	tests := []struct {
		name     string
		anon     *Scope
		h        http.Header
		want     int
		wantName string
	}{
		{"bearer", nil, header("Authorization", "Bearer "+quizKey), 200, "quiz-app"},
		{"bearer, any case", nil, header("Authorization", "bearer "+quizKey), 200, "quiz-app"},
		{"x-api-key", nil, header("x-api-key", adminKey), 200, "ops"},
		{"both, same key", nil, header("Authorization", "Bearer "+adminKey, "X-Api-Key", adminKey), 200, "ops"},
		{"both, different keys", nil, header("Authorization", "Bearer "+adminKey, "X-Api-Key", quizKey), 401, ""},
		{"no key", nil, header(), 401, ""},
		{"no key, anonymous policy", &Scope{Models: []string{}}, header(), 200, AnonymousName},
		{"wrong key, anonymous policy", &Scope{}, header("Authorization", "Bearer nope"), 401, ""},
		{"wrong key", nil, header("Authorization", "Bearer "+quizKey+"x"), 401, ""},
		{"prefix of a key", nil, header("Authorization", "Bearer "+quizKey[:10]), 401, ""},
		{"basic scheme", nil, header("Authorization", "Basic "+quizKey), 401, ""},
		{"bearer without key", nil, header("Authorization", "Bearer"), 401, ""},
		{"header twice", nil, header("Authorization", "Bearer "+quizKey, "Authorization", "Bearer "+quizKey), 401, ""},
		{"huge key", nil, header("Authorization", "Bearer "+strings.Repeat("k", 1<<20)), 401, ""},
		{"control byte", nil, header("x-api-key", quizKey+"\x00"), 401, ""},
		{"hash as key", nil, header("Authorization", "Bearer "+Hash(quizKey)), 401, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := testChecker(t, tt.anon).Identify(tt.h)
			if got := status(err); got != tt.want {
				t.Fatalf("Identify = %v, want status %d", err, tt.want)
			}
			if err != nil {
				if ReasonOf(err) != ReasonUnauthenticated {
					t.Errorf("reason = %q, want %q", ReasonOf(err), ReasonUnauthenticated)
				}
				if strings.Contains(err.Error(), quizKey) || strings.Contains(err.Error(), adminKey) {
					t.Errorf("error %q holds the key", err)
				}
				return
			}
			if p.Name != tt.wantName {
				t.Errorf("Identify = %q, want %q", p.Name, tt.wantName)
			}
		})
	}
}

func TestAuthorize(t *testing.T) {
	c := testChecker(t, &Scope{Models: []string{"tiny*"}})
	quiz, _ := c.Identify(header("Authorization", "Bearer "+quizKey))
	ops, _ := c.Identify(header("Authorization", "Bearer "+adminKey))
	anon, _ := c.Identify(header())
	tests := []authorizeCase{
		{"model in globs", quiz, "POST", "/api/chat", `{"model":"quiz"}`, 200, ""},
		{"model with tag", quiz, "POST", "/api/generate", `{"model":"llama3.2:3b"}`, 200, ""},
		{"latest tag", quiz, "POST", "/v1/chat/completions", `{"model":"quiz:latest"}`, 200, ""},
		{"full name", quiz, "POST", "/v1/messages", `{"model":"registry.ollama.ai/library/quiz:latest"}`, 200, ""},
		{"any case", quiz, "POST", "/api/chat", `{"model":"QUIZ"}`, 200, ""},
		{"other model", quiz, "POST", "/api/chat", `{"model":"mistral"}`, 403, ReasonModel},
		{"other namespace", quiz, "POST", "/api/chat", `{"model":"evil/quiz"}`, 403, ReasonModel},
		{"glob does not cross a slash", quiz, "POST", "/api/chat", `{"model":"llama3.2/x"}`, 403, ReasonModel},
		{"folded member", quiz, "POST", "/api/chat", `{"model":"quiz","Model":"mistral"}`, 403, ReasonModel},
		{"duplicate member", quiz, "POST", "/api/chat", `{"model":"quiz","model":"mistral"}`, 403, ReasonModel},
		{"no model", quiz, "POST", "/api/embed", `{"input":"x"}`, 403, ReasonModel},
		{"empty body", quiz, "POST", "/v1/embeddings", ``, 403, ReasonModel},
		{"show by name", quiz, "POST", "/api/show", `{"name":"mistral"}`, 403, ReasonModel},
		{"retrieve other", quiz, "GET", "/v1/models/mistral", ``, 403, ReasonModel},
		{"retrieve own", quiz, "GET", "/v1/models/quiz", ``, 200, ""},
		{"version", quiz, "GET", "/api/version", ``, 200, ""},
		{"tags", quiz, "GET", "/api/tags", ``, 200, ""},
		{"pull without manage", quiz, "POST", "/api/pull", `{"model":"quiz"}`, 403, ReasonManage},
		{"delete without manage", quiz, "DELETE", "/api/delete", `{"model":"quiz"}`, 403, ReasonManage},
		{"blob without manage", quiz, "HEAD", "/api/blobs/sha256:00", ``, 403, ReasonManage},
		{"copy without manage", quiz, "POST", "/api/copy", `{"source":"quiz","destination":"x"}`, 403, ReasonManage},
		{"push without manage", quiz, "POST", "/api/push", `{"model":"quiz"}`, 403, ReasonManage},
		{"create without manage", quiz, "POST", "/api/create", `{"model":"quiz"}`, 403, ReasonManage},
		{"pull with manage", ops, "POST", "/api/pull", `{"model":"anything"}`, 200, ""},
		{"blob with manage", ops, "POST", "/api/blobs/sha256:00", ``, 200, ""},
		{"all models", ops, "POST", "/api/chat", `{"model":"mistral"}`, 200, ""},
		{"anonymous in scope", anon, "POST", "/api/generate", `{"model":"tinyllama"}`, 200, ""},
		{"anonymous out of scope", anon, "POST", "/api/generate", `{"model":"quiz"}`, 403, ReasonModel},
		{"anonymous manage", anon, "POST", "/api/pull", `{"model":"tinyllama"}`, 403, ReasonManage},
	}
	runAuthorize(t, tests)
}

func TestBodyModels(t *testing.T) {
	tests := []struct {
		body    string
		want    []string
		wantErr bool
	}{
		{`{"model":"a"}`, []string{"a"}, false},
		{`{"MODEL":"a","model":"b"}`, []string{"a", "b"}, false},
		{`{"messages":[{"model":"x"}],"model":"a"}`, []string{"a"}, false},
		{`{"model":7}`, nil, false},
		{`  `, nil, false},
		{`[]`, nil, true},
		{`{"model":"a"`, nil, true},
		{`{"model":"a"} {}`, nil, true},
		{`"model"`, nil, true},
	}
	for _, tt := range tests {
		got, err := BodyModels([]byte(tt.body), "model")
		if (err != nil) != tt.wantErr || !cmp.Equal(got, tt.want) {
			t.Errorf("BodyModels(%q) = %q, %v; want %q, error %v", tt.body, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestNewRefusesBadKeys(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{"no name", Config{Keys: []Key{{SHA256: Hash("k")}}}, "name: required"},
		{"bad hash", Config{Keys: []Key{{Name: "a", SHA256: "abc"}}}, "sha256"},
		{"bad glob", Config{Keys: []Key{{Name: "a", SHA256: Hash("k"), Scope: Scope{Models: []string{"[a"}}}}}, "not a glob"},
		{"negative limit", Config{Keys: []Key{{Name: "a", SHA256: Hash("k"), Limits: Limits{Concurrent: -1}}}}, "concurrent"},
		{"same name", Config{Keys: []Key{{Name: "a", SHA256: Hash("k")}, {Name: "a", SHA256: Hash("j")}}}, "used twice"},
		{"bad anonymous glob", Config{Anonymous: &Scope{Models: []string{"[a"}}}, "anonymous.models"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.cfg)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("New = %v, want an error with %q", err, tt.want)
			}
		})
	}
}

func TestFilterList(t *testing.T) {
	c := testChecker(t, nil)
	quiz, _ := c.Identify(header("Authorization", "Bearer "+quizKey))
	ops, _ := c.Identify(header("Authorization", "Bearer "+adminKey))
	tags := `{"models":[{"name":"quiz:latest","model":"quiz:latest","size":1},{"name":"mistral:latest","model":"mistral:latest"},{"name":"llama3.2:3b","model":"llama3.2:3b"}]}`
	openai := `{"object":"list","data":[{"id":"mistral:latest","object":"model"},{"id":"quiz","object":"model"}]}`
	aliases := `{"aliases":[{"alias":"llama3.2-x","target":"quiz"},{"alias":"llama3.2-y","target":"mistral"},{"alias":"prod","target":"quiz"},{"alias":"llama3.2-z"}]}`
	tests := []struct {
		name string
		p    *Principal
		kind List
		body string
		want string
	}{
		{"tags", quiz, ListOllama, tags, `{"models":[{"name":"quiz:latest","model":"quiz:latest","size":1},{"name":"llama3.2:3b","model":"llama3.2:3b"}]}`},
		{"openai", quiz, ListOpenAI, openai, `{"data":[{"id":"quiz","object":"model"}],"object":"list"}`},
		{"all models", ops, ListOllama, tags, tags},
		{"no list", quiz, ListOllama, `{"models":null}`, `{"models":null}`},
		{"aliases whose name and target are the key's", quiz, ListAliases, aliases, `{"aliases":[{"alias":"llama3.2-x","target":"quiz"}]}`},
		{"aliases with every model", ops, ListAliases, aliases, aliases},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.p.FilterList(tt.kind, []byte(tt.body))
			if err != nil || string(got) != tt.want {
				t.Errorf("FilterList = %s, %v; want %s", got, err, tt.want)
			}
		})
	}
}

func TestCheckProtected(t *testing.T) {
	key := []Key{{Name: "a", SHA256: Hash("k")}}
	tests := []struct {
		listen string
		cfg    Config
		ok     bool
	}{
		{"127.0.0.1:11435", Config{}, true},
		{"[::1]:11435", Config{}, true},
		{"localhost:11435", Config{}, true},
		{"0.0.0.0:11435", Config{}, false},
		{":11435", Config{}, false},
		{"10.0.0.7:11435", Config{}, false},
		{"gpu-box.lan:11435", Config{}, false},
		{"0.0.0.0:11435", Config{AllowAnonymous: true}, true},
		{"0.0.0.0:11435", Config{Keys: key}, true},
	}
	for _, tt := range tests {
		err := CheckProtected(tt.listen, tt.cfg)
		if (err == nil) != tt.ok {
			t.Errorf("CheckProtected(%q, %+v) = %v, want ok %v", tt.listen, tt.cfg, err, tt.ok)
		}
		if err != nil && !strings.Contains(err.Error(), "allow_anonymous") {
			t.Errorf("CheckProtected(%q) = %v, want it to name allow_anonymous", tt.listen, err)
		}
	}
}

func TestNewKey(t *testing.T) {
	k1, h1 := NewKey()
	k2, _ := NewKey()
	if k1 == k2 || !strings.HasPrefix(k1, KeyPrefix) || len(k1) > MaxKeyLen || h1 != Hash(k1) {
		t.Errorf("NewKey = %q %q, %q: want distinct prefixed keys and their hash", k1, h1, k2)
	}
	c, err := New(Config{Keys: []Key{{Name: "n", SHA256: h1}}})
	if err != nil {
		t.Fatal(err)
	}
	if p, err := c.Identify(header("Authorization", "Bearer "+k1)); err != nil || p.Name != "n" {
		t.Errorf("Identify(new key) = %v, %v", p, err)
	}
	lines, err := ConfigLines("n", h1)
	if err != nil || strings.Contains(lines, k1) || !strings.Contains(lines, h1) {
		t.Errorf("ConfigLines = %q, %v: want the hash and never the key", lines, err)
	}
}

func FuzzBodyModels(f *testing.F) {
	for _, s := range []string{`{"model":"a"}`, `{"Model":"a","model":"b"}`, `[]`, ``, `{"model":"\u0000"}`, `{"a":{"model":1}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		names, err := BodyModels(raw, "model", "name")
		if err != nil && names != nil {
			t.Fatalf("BodyModels(%q) = %q with error %v", raw, names, err)
		}
		for _, n := range names {
			matchModel([]string{"quiz*"}, n)
		}
	})
}

func FuzzIdentify(f *testing.F) {
	for _, s := range []string{"Bearer " + quizKey, "bearer x", "Basic y", "", "Bearer", "Bearer  a b"} {
		f.Add(s, quizKey)
	}
	c, err := New(Config{Keys: []Key{{Name: "quiz-app", SHA256: Hash(quizKey)}}})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, auth, xkey string) {
		p, err := c.Identify(http.Header{"Authorization": {auth}, "X-Api-Key": {xkey}})
		if err == nil && p.Name != "quiz-app" {
			t.Fatalf("Identify(%q, %q) = %q", auth, xkey, p.Name)
		}
		if err != nil && status(err) != http.StatusUnauthorized {
			t.Fatalf("Identify(%q, %q) = %v, want 401", auth, xkey, err)
		}
	})
}

// BenchmarkIdentify times the right key, a wrong one, and a wrong key
// that shares all but the right one's last byte: the two wrong keys cost
// the same, since hashes are compared whole and every configured one is
// compared, so a prefix learns nothing (a refusal costs its error on top).
// The figures are for reading, never asserted.
func BenchmarkIdentify(b *testing.B) {
	var keys []Key
	for i := range 16 {
		keys = append(keys, Key{Name: "k" + string(rune('a'+i)), SHA256: Hash(quizKey + string(rune('a'+i)))})
	}
	keys = append(keys, Key{Name: "quiz-app", SHA256: Hash(quizKey)})
	c, err := New(Config{Keys: keys})
	if err != nil {
		b.Fatal(err)
	}
	for _, bb := range []struct{ name, key string }{
		{"right", quizKey}, {"wrong", "cgk_entirely-different-key!!"}, {"right prefix", quizKey[:len(quizKey)-1] + "X"},
	} {
		h := http.Header{"Authorization": {"Bearer " + bb.key}}
		b.Run(bb.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				c.Identify(h)
			}
		})
	}
}

// authorizeCase is one request a principal makes, and the status and
// refusal reason Authorize must give it.
type authorizeCase struct {
	name   string
	p      *Principal
	method string
	path   string
	body   string
	want   int
	reason string
}

// runAuthorize classifies each case's request, reads what it needs from
// its body, and checks what Authorize says of it.
func runAuthorize(t *testing.T, tests []authorizeCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, err := Classify(tt.method, tt.path).Need([]byte(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			err = tt.p.Authorize(n)
			if got := status(err); got != tt.want || ReasonOf(err) != tt.reason {
				t.Errorf("Authorize(%s %s %s) for %s = %v (reason %q), want %d %q", tt.method, tt.path, tt.body, tt.p.Name, err, ReasonOf(err), tt.want, tt.reason)
			}
		})
	}
}
