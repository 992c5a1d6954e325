// Package apis is the registry of the wire APIs the guard speaks: the one
// place that names every codec, so that the guard, the gateway's model
// routes and its token limits serve the same APIs. It sits above the API
// packages (ollama, openai, anthropic), which share package codec beneath
// them; adding an API is its package (or a file in its family's) and one
// line in All.
package apis

import (
	"strings"

	"github.com/contractgateway/gateway/middleware/codec"
	"github.com/contractgateway/gateway/middleware/codec/anthropic"
	"github.com/contractgateway/gateway/middleware/codec/ollama"
	"github.com/contractgateway/gateway/middleware/codec/openai"
)

// All returns the codecs of every guarded API: the registry, in one
// place.
func All() []codec.Codec {
	return []codec.Codec{ollama.Generate{}, ollama.Chat{}, openai.Chat{}, openai.Completions{}, openai.Responses{}, anthropic.Messages{}}
}

// ForPath returns the codec of All that serves path (a trailing slash
// ignored, as the guard's routing ignores it), or nil.
func ForPath(path string) codec.Codec {
	path = strings.TrimSuffix(path, "/")
	for _, cd := range All() {
		if cd.Path() == path {
			return cd
		}
	}
	return nil
}
