package middleware

import "testing"

// FuzzReadAnswer: reading an upstream answer (one object, NDJSON or SSE)
// never panics, and an accepted answer has an object to answer with.
func FuzzReadAnswer(f *testing.F) {
	f.Add(`{"model":"m","response":"{\"a\":1}","done":true}`)
	f.Add("{\"response\":\"{\\\"a\\\"\",\"done\":false}\n{\"response\":\":1}\",\"done\":true}\n")
	f.Add("data: {\"choices\":[{\"delta\":{\"content\":\"{}\"}}]}\n\ndata: [DONE]\n\n")
	f.Add("{\"error\":\"boom\"}\n")
	f.Fuzz(func(t *testing.T, body string) {
		for _, cd := range Codecs() {
			a, err := cd.ReadAnswer([]byte(body))
			if err == nil && (a == nil || a.Obj == nil) {
				t.Fatalf("%s ReadAnswer(%q) accepted without an object", cd.Path(), body)
			}
			if err == nil {
				if got := cd.WithText(a.Obj, "x"); got == nil {
					t.Fatalf("%s WithText returned nil", cd.Path())
				}
			}
		}
	})
}

// FuzzDecode: reading a guarded request never panics, and editing an
// accepted one always yields a body that decodes again.
func FuzzDecode(f *testing.F) {
	f.Add(`{"model":"m","prompt":"p","stream":false,"format":{"type":"object"},"options":{"temperature":1}}`)
	f.Add(`{"model":"m","messages":[{"role":"user","content":"hi"}],"response_format":{"type":"json_schema","json_schema":{"schema":{}}}}`)
	f.Add(`{"model":1}`)
	f.Add(`{"model":"m","options":3}`)
	f.Fuzz(func(t *testing.T, body string) {
		for _, cd := range Codecs() {
			r, err := cd.Decode([]byte(body))
			if err != nil {
				continue
			}
			r.SetModel("other")
			r.SetStream(false)
			cd.SetTemperature(r, 0.3)
			if !cd.Temperature(r) {
				t.Fatalf("%s: no temperature after SetTemperature: %s", cd.Path(), r.Bytes())
			}
			if _, err := cd.Decode(r.Bytes()); err != nil {
				t.Fatalf("%s: edited request does not decode: %v\n%s", cd.Path(), err, r.Bytes())
			}
		}
	})
}
