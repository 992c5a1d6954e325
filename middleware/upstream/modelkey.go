package upstream

import (
	"strings"

	ollamamodel "github.com/ollama/ollama/types/model"
)

// ModelKey is the key under which a model name is matched, by Ollama's
// own name rules (types/model): a name without a tag means the tag
// "latest", without a namespace "library", without a host
// "registry.ollama.ai", and two names are one model whatever their case
// (model.Name.EqualFold). So "quiz", "Quiz:latest", "library/quiz" and
// "registry.ollama.ai/library/quiz:latest" share one key, as Ollama would
// answer them with one model: the pool finds the upstreams that have a
// model, and the guard its virtual models, by this key. A name Ollama does not take as valid keeps its text, with
// ":latest" when it has no tag after its last "/".
func ModelKey(m string) string {
	if m == "" {
		return ""
	}
	if n := ollamamodel.ParseName(m); n.IsValid() {
		return strings.ToLower(n.String())
	}
	if strings.Contains(m[strings.LastIndex(m, "/")+1:], ":") {
		return m
	}
	return m + ":latest"
}
