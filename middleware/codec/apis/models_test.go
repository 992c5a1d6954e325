package apis

import (
	"testing"

	"github.com/contractgateway/gateway/middleware/codec"
	"github.com/contractgateway/gateway/middleware/codec/ollama"
	"github.com/contractgateway/gateway/middleware/codec/openai"
	"github.com/contractgateway/gateway/validators/strictjson"
)

// TestListings: each guarded API's codec reads and writes its own listing
// of models — Ollama's /api/tags for generate and chat, OpenAI's
// /v1/models (and /v1/models/{id}) for the OpenAI-compatible ones, none
// for Anthropic's — and a model listed under another name (a virtual
// model's) is a renamed copy of its entry, every other member kept.
func TestListings(t *testing.T) {
	tests := []struct {
		path     string
		listing  string // the codec's listing path, "" for none
		retrieve string
		list     string
		// names are the models read; want is the list written back with
		// the first entry also listed as "alias:latest".
		names []string
		want  string
	}{
		{"/api/generate", "/api/tags", "",
			`{"models":[{"name":"a:latest","model":"a:latest","size":1},{"name":"b"}]}`, []string{"a:latest", "b"},
			`{"models":[{"name":"a:latest","model":"a:latest","size":1},{"name":"b"},{"name":"alias:latest","model":"alias:latest","size":1}]}`},
		{"/api/chat", "/api/tags", "",
			`{"models":[{"name":"a","model":"a"}],"extra":true}`, []string{"a"},
			`{"models":[{"name":"a","model":"a"},{"name":"alias:latest","model":"alias:latest"}],"extra":true}`},
		{"/v1/chat/completions", "/v1/models", "/v1/models/",
			`{"object":"list","data":[{"id":"a","object":"model","created":1}]}`, []string{"a"},
			`{"object":"list","data":[{"id":"a","object":"model","created":1},{"id":"alias:latest","object":"model","created":1}]}`},
		{"/v1/completions", "/v1/models", "/v1/models/",
			`{"data":[{"id":"a"}]}`, []string{"a"}, `{"data":[{"id":"a"},{"id":"alias:latest"}]}`},
		{"/v1/responses", "/v1/models", "/v1/models/",
			`{"data":[{"id":"a"}]}`, []string{"a"}, `{"data":[{"id":"a"},{"id":"alias:latest"}]}`},
		{"/v1/messages", "", "", "", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			lc, ok := ForPath(tt.path).(codec.ListingCodec)
			if !ok {
				if tt.listing != "" {
					t.Fatalf("codec of %s lists no models, want %s", tt.path, tt.listing)
				}
				return
			}
			l := lc.Models()
			if l.Path != tt.listing || l.Retrieve != tt.retrieve {
				t.Fatalf("Models() of %s = %q %q, want %q %q", tt.path, l.Path, l.Retrieve, tt.listing, tt.retrieve)
			}
			list, err := strictjson.Parse([]byte(tt.list))
			if err != nil {
				t.Fatal(err)
			}
			models := l.Models(list)
			var names []string
			for _, m := range models {
				names = append(names, m.Name)
			}
			if len(names) != len(tt.names) || len(names) > 0 && names[0] != tt.names[0] {
				t.Errorf("Models(%s) = %q, want %q", tt.list, names, tt.names)
			}
			models = append(models, codec.Model{Name: "alias:latest", Entry: models[0].Entry})
			if got := string(strictjson.Marshal(l.Write(list, models))); got != tt.want {
				t.Errorf("Write(%s) = %s, want %s", tt.list, got, tt.want)
			}
		})
	}
}

// TestListingNamedKeepsOtherMembers: one model's entry (OpenAI's
// /v1/models/{id}) is answered under the name asked, and a listing whose
// entries are no objects is written as it came.
func TestListingNamedKeepsOtherMembers(t *testing.T) {
	tests := []struct {
		entry, name, want string
	}{
		{`{"id":"base","object":"model","created":1,"owned_by":"library"}`, "quiz", `{"id":"quiz","object":"model","created":1,"owned_by":"library"}`},
		{`[1]`, "quiz", `[1]`},
	}
	for _, tt := range tests {
		v, err := strictjson.Parse([]byte(tt.entry))
		if err != nil {
			t.Fatal(err)
		}
		if got := string(strictjson.Marshal(openai.Chat{}.Models().Named(v, tt.name))); got != tt.want {
			t.Errorf("Named(%s, %q) = %s, want %s", tt.entry, tt.name, got, tt.want)
		}
	}
}

// FuzzListing: any JSON read as a listing is written back without a panic,
// with a virtual model's copy of each entry.
func FuzzListing(f *testing.F) {
	for _, s := range []string{`{"models":[{"name":"a"}]}`, `{"models":[1,"x",null,{"name":7}]}`, `{"data":{"id":"a"}}`, `{}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		list, err := strictjson.Parse(b)
		if err != nil || list.Kind != strictjson.KindObject {
			return
		}
		for _, l := range []*codec.Listing{ollama.Chat{}.Models(), openai.Chat{}.Models()} {
			models := l.Models(list)
			for _, m := range models {
				models = append(models, codec.Model{Name: "v:latest", Entry: m.Entry})
			}
			if got := l.Models(l.Write(list.Clone(), models)); len(got) != len(models) {
				t.Fatalf("Write(%s) lists %d models, want %d", b, len(got), len(models))
			}
		}
	})
}
