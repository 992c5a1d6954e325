package codec

import (
	"testing"

	"github.com/contractgateway/gateway/validators/strictjson"
)

func TestChild(t *testing.T) {
	tests := []struct {
		name, body, key string
		kind            strictjson.Kind
		want            string
	}{
		{"absent object", `{"a":1}`, "o", strictjson.KindObject, `{"a":1,"o":{"x":true}}`},
		{"present object kept", `{"o":{"y":2}}`, "o", strictjson.KindObject, `{"o":{"y":2,"x":true}}`},
		{"wrong kind replaced in place", `{"o":"s","b":2}`, "o", strictjson.KindObject, `{"o":{"x":true},"b":2}`},
		{"null replaced", `{"o":null}`, "o", strictjson.KindObject, `{"o":{"x":true}}`},
		{"absent array", `{}`, "l", strictjson.KindArray, `{"l":[true]}`},
		{"present array kept", `{"l":[1]}`, "l", strictjson.KindArray, `{"l":[1,true]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj, err := strictjson.Parse([]byte(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			c := Child(obj, tt.key, tt.kind)
			if c.Kind == strictjson.KindArray {
				c.Items = append(c.Items, strictjson.BoolValue(true))
			} else {
				c.Set("x", strictjson.BoolValue(true))
			}
			if got := string(strictjson.Marshal(obj)); got != tt.want {
				t.Errorf("Child(%s, %q) then an edit = %s, want %s", tt.body, tt.key, got, tt.want)
			}
		})
	}
}
