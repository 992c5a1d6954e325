package middleware

import "github.com/contractgateway/gateway/strictjson"

// Stopper is implemented by a Codec whose answers carry a stop reason.
// An answer the guard brought into contract is whole, however the model's
// own text ended: the client gets the API's normal stop (Ollama's
// done_reason and OpenAI's finish_reason "stop", the Responses API's
// status "completed", Anthropic's stop_reason "end_turn"), and the
// contract summary keeps the upstream's reason as done_reason_upstream
// when it was another. Clients treat any other reason as a cut answer
// (the OpenAI library's parse refuses "length").
type Stopper interface {
	// NormalStop sets obj's stop reason to the API's normal stop and
	// returns the reason it had, "" when it had none or the normal one.
	// Tool calls keep their own reason.
	NormalStop(obj *strictjson.Value) (upstream string)
}

// summaryWithStop sets the normal stop on obj when its codec knows one,
// and records the upstream's reason in the contract summary sum.
func summaryWithStop(cd Codec, obj, sum *strictjson.Value) *strictjson.Value {
	st, ok := cd.(Stopper)
	if !ok {
		return sum
	}
	if up := st.NormalStop(obj); up != "" {
		sum.Set("done_reason_upstream", strictjson.String(up))
	}
	return sum
}

// replaceString sets member key of obj to want when obj has it as another
// string (or null), and returns what it was.
func replaceString(obj *strictjson.Value, key, want string, keep ...string) string {
	v := obj.Get(key)
	if v == nil || (v.Kind != strictjson.KindString && !v.IsNull()) {
		return ""
	}
	was, _ := v.AsString()
	if was == want {
		return ""
	}
	for _, k := range keep {
		if was == k {
			return ""
		}
	}
	obj.Set(key, strictjson.String(want))
	if v.IsNull() {
		return ""
	}
	return was
}

func (generateCodec) NormalStop(obj *strictjson.Value) string {
	return replaceString(obj, "done_reason", "stop")
}

func (chatCodec) NormalStop(obj *strictjson.Value) string {
	return replaceString(obj, "done_reason", "stop")
}

func (openAIChatCodec) NormalStop(obj *strictjson.Value) string {
	choice := obj.Get("choices").Index(0)
	if choice == nil || choice.Kind != strictjson.KindObject {
		return ""
	}
	return replaceString(choice, "finish_reason", "stop", "tool_calls", "function_call")
}

func (completionsCodec) NormalStop(obj *strictjson.Value) string {
	choice := obj.Get("choices").Index(0)
	if choice == nil || choice.Kind != strictjson.KindObject {
		return ""
	}
	return replaceString(choice, "finish_reason", "stop")
}

// NormalStop marks an incomplete response completed; its reason
// (max_output_tokens) is the upstream's.
func (responsesCodec) NormalStop(obj *strictjson.Value) string {
	if st, _ := obj.Get("status").AsString(); st != "incomplete" {
		return ""
	}
	was, _ := obj.Get("incomplete_details").Get("reason").AsString()
	obj.Set("status", strictjson.String("completed"))
	obj.Set("incomplete_details", strictjson.Null())
	if was == "" {
		was = "incomplete"
	}
	return was
}

func (anthropicCodec) NormalStop(obj *strictjson.Value) string {
	return replaceString(obj, "stop_reason", "end_turn", "tool_use")
}
