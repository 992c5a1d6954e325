package access

import (
	"path"
	"strings"

	ollamamodel "github.com/ollama/ollama/types/model"
)

// matchModel reports whether a model name the client sends matches one of
// globs. The name is taken as Ollama takes it (types/model): without a tag
// it is "latest", without a namespace "library", without a host
// "registry.ollama.ai", and case does not matter. The globs see its
// shortest form ("quiz:latest", "me/quiz:7b", "hf.co/org/m:q4") and, for
// the "latest" tag, the form without it ("quiz"): so "quiz" allows
// "quiz", "Quiz:latest" and "registry.ollama.ai/library/quiz:latest",
// which Ollama answers with one model, and never "other/quiz", which is
// another. A "*" does not cross a "/".
func matchModel(globs []string, name string) bool {
	for _, form := range modelForms(name) {
		for _, g := range globs {
			if ok, _ := path.Match(strings.ToLower(g), form); ok {
				return true
			}
		}
	}
	return false
}

// modelForms are the lower-case forms of a model name the globs are
// matched against. A name Ollama does not take as valid keeps its text
// (it reaches no model, but a virtual model may have any name).
func modelForms(name string) []string {
	name = strings.TrimSpace(name)
	if name == "" {
		return nil
	}
	short := strings.ToLower(name)
	if n := ollamamodel.ParseName(name); n.IsValid() {
		short = strings.ToLower(n.DisplayShortest())
	}
	if bare, ok := strings.CutSuffix(short, ":latest"); ok {
		return []string{short, bare}
	}
	return []string{short}
}
