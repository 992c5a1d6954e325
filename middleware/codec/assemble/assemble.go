// Package assemble turns an upstream's stream into the answer the
// upstream gives the same request without a stream, event by event, one
// file per API: Ollama's NDJSON chunks, OpenAI's chat completion and
// completion chunks, the Messages and Responses events. Each assembler
// takes one event at a time (the events frame.Reader frames, or those of
// a whole body) and returns the model text it adds, so that the guard
// sees the text as the model writes it; at the end it makes the answer's
// object, which the codec of the API reads as it reads one answer.
package assemble

import (
	"fmt"

	"github.com/contractgateway/gateway/middleware/codec/frame"
	"github.com/contractgateway/gateway/validators/strictjson"
)

// errIncomplete is frame.ErrIncomplete, which the codecs export.
var errIncomplete = frame.ErrIncomplete

// OpenAIErrorMessage reads the message of an OpenAI error member (an
// object with a message, or Ollama's plain string).
func OpenAIErrorMessage(e *strictjson.Value) string {
	if s, ok := e.AsString(); ok {
		return s
	}
	return str(e.Get("message"))
}

// UpstreamError is the error of an OpenAI answer or chunk whose error
// member is set, nil for one without.
func UpstreamError(obj *strictjson.Value) error {
	if e := obj.Get("error"); e != nil && !e.IsNull() {
		return fmt.Errorf("upstream: %s", OpenAIErrorMessage(e))
	}
	return nil
}

func member(key string, v *strictjson.Value) strictjson.Member {
	return strictjson.Member{Key: key, KeyOffset: -1, Value: v}
}

// items returns the items of an array, nil for anything else (nil
// included).
func items(v *strictjson.Value) []*strictjson.Value {
	if v == nil || v.Kind != strictjson.KindArray {
		return nil
	}
	return v.Items
}

// str is the string v holds, "" for anything else.
func str(v *strictjson.Value) string {
	s, _ := v.AsString()
	return s
}
