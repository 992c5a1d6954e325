package route

import (
	"testing"

	"github.com/contractgateway/gateway/contracts"
)

// TestModelKeyOllamaNames: names Ollama takes for one model share a key;
// names it takes for two do not.
func TestModelKeyOllamaNames(t *testing.T) {
	tests := []struct {
		a, b string
		same bool
	}{
		{"quiz", "quiz", true},
		{"quiz", "quiz:latest", true},
		{"quiz", "library/quiz", true},
		{"quiz", "library/quiz:latest", true},
		{"quiz", "registry.ollama.ai/library/quiz", true},
		{"quiz", "registry.ollama.ai/library/quiz:latest", true},
		{"quiz", "https://registry.ollama.ai/library/quiz:latest", true},
		{"quiz", "QUIZ", true},
		{"quiz", "Library/Quiz:Latest", true},
		{"quiz", "Registry.Ollama.AI/library/quiz", true},
		{"ns/scorer:latest", "ns/scorer", true},
		{"ns/scorer", "registry.ollama.ai/ns/scorer:latest", true},
		{"hf.co/org/m:q4", "HF.CO/org/m:Q4", true},
		{"quiz", "quiz:v2", false},
		{"quiz", "other/quiz", false},
		{"quiz", "example.com/library/quiz", false},
		{"ns/scorer", "scorer", false},
		{"tagged:v2", "tagged", false},
		{"quiz", "quiz2", false},
	}
	for _, tt := range tests {
		if got := ModelKey(tt.a) == ModelKey(tt.b); got != tt.same {
			t.Errorf("ModelKey(%q) == ModelKey(%q) is %v (%q, %q), want %v", tt.a, tt.b, got, ModelKey(tt.a), ModelKey(tt.b), tt.same)
		}
	}
}

// TestResolveVirtualModelOllamaNames: a virtual model is guarded under
// every name Ollama would answer with the model of the same name.
func TestResolveVirtualModelOllamaNames(t *testing.T) {
	reg, err := contracts.LoadRegistry("")
	if err != nil {
		t.Fatal(err)
	}
	routes, err := NewRoutes(reg, []Spec{{Model: "quiz", Contract: "mcq"}}, false)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		model string
		want  bool
	}{
		{"quiz", true},
		{"quiz:latest", true},
		{"library/quiz", true},
		{"registry.ollama.ai/library/quiz:latest", true},
		{"Quiz", true},
		{"LIBRARY/QUIZ:LATEST", true},
		{"quiz:v2", false},
		{"someone/quiz", false},
	}
	for _, tt := range tests {
		r, err := routes.Resolve(Lookup{Model: tt.model})
		if err != nil || (r != nil) != tt.want {
			t.Errorf("Resolve(%q) = %v, %v; want guarded %v", tt.model, r, err, tt.want)
		}
		if _, ok := routes.VirtualModel(tt.model); ok != tt.want {
			t.Errorf("VirtualModel(%q) found = %v, want %v", tt.model, ok, tt.want)
		}
	}
	if _, err := NewRoutes(reg, []Spec{{Model: "quiz", Contract: "mcq"}, {Model: "library/quiz", Contract: "json"}}, false); err == nil {
		t.Error("NewRoutes accepted quiz and library/quiz, the same model twice")
	}
}

// TestModelName: every spelling of one model is counted under one name,
// Ollama's shortest, lower case and without the default tag.
func TestModelName(t *testing.T) {
	tests := []struct{ in, want string }{
		{"alpha", "alpha"},
		{"AlPhA", "alpha"},
		{"alpha:latest", "alpha"},
		{"ALPHA:LATEST", "alpha"},
		{"library/alpha", "alpha"},
		{"registry.ollama.ai/library/alpha:latest", "alpha"},
		{"alpha:7B", "alpha:7b"},
		{"ns/scorer", "ns/scorer"},
		{"registry.ollama.ai/ns/scorer:latest", "ns/scorer"},
		{"hf.co/org/m:Q4", "hf.co/org/m:q4"},
		{"", ""},
		{"not a valid name!", "not a valid name!"},
	}
	for _, tt := range tests {
		if got := ModelName(tt.in); got != tt.want {
			t.Errorf("ModelName(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
