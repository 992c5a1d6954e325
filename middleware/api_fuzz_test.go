package middleware

import "testing"

// FuzzParseResponse: reading an upstream answer (one object, NDJSON or SSE)
// never panics, and an accepted answer has an object to answer with.
func FuzzParseResponse(f *testing.F) {
	f.Add(`{"model":"m","response":"{\"a\":1}","done":true}`)
	f.Add("{\"response\":\"{\\\"a\\\"\",\"done\":false}\n{\"response\":\":1}\",\"done\":true}\n")
	f.Add("data: {\"choices\":[{\"delta\":{\"content\":\"{}\"}}]}\n\ndata: [DONE]\n\n")
	f.Add("{\"error\":\"boom\"}\n")
	f.Fuzz(func(t *testing.T, body string) {
		for _, fl := range []flavour{flavourGenerate, flavourChat, flavourOpenAI} {
			r, err := parseResponse(fl, []byte(body))
			if err == nil && (r == nil || r.obj == nil) {
				t.Fatalf("parseResponse(%d, %q) accepted without an object", fl, body)
			}
		}
	})
}

// FuzzParseRequest: reading a guarded request never panics, and editing an
// accepted one always yields a body that parses again.
func FuzzParseRequest(f *testing.F) {
	f.Add(`{"model":"m","prompt":"p","stream":false,"format":{"type":"object"},"options":{"temperature":1}}`)
	f.Add(`{"model":"m","messages":[{"role":"user","content":"hi"}],"response_format":{"type":"json_schema","json_schema":{"schema":{}}}}`)
	f.Add(`{"model":1}`)
	f.Fuzz(func(t *testing.T, body string) {
		for _, fl := range []flavour{flavourGenerate, flavourChat, flavourOpenAI} {
			r, err := parseRequest(fl, []byte(body))
			if err != nil {
				continue
			}
			r.setModel("other")
			r.setStream(false)
			r.setTemperature(0.3)
			if _, err := parseRequest(fl, r.bytes()); err != nil {
				t.Fatalf("edited request does not parse: %v\n%s", err, r.bytes())
			}
		}
	})
}
