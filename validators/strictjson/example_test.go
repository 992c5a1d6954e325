package strictjson_test

import (
	"errors"
	"fmt"

	"github.com/contractgateway/gateway/validators/strictjson"
)

func ExampleParse() {
	v, err := strictjson.Parse([]byte(`{"title": "Q&A <b>", "score": 1.370, "tags": []}`))
	if err != nil {
		panic(err)
	}
	fmt.Println(string(strictjson.Marshal(v)))
	fmt.Println(v.Get("score").Num, v.Get("score").Offset)
	// Output:
	// {"title":"Q&A <b>","score":1.370,"tags":[]}
	// 1.370 30
}

func ExampleSyntaxError() {
	_, err := strictjson.Parse([]byte("{\n  \"options\": [\"a\", \"b\",],\n}"))
	var se *strictjson.SyntaxError
	if errors.As(err, &se) {
		fmt.Println(se)
		fmt.Printf("char %s, expected %s, reason %s\n", se.Char, se.Expected, se.Reason)
	}
	// Output:
	// line 2, column 23: trailing comma before ']'
	// char ,, expected ']', reason trailing_comma
}

func ExampleReplace() {
	doc, _ := strictjson.Parse([]byte(`{"meta": {"question_count": 9}, "questions": []}`))
	doc, err := strictjson.Replace(doc, "/meta/question_count", strictjson.Int(0))
	if err != nil {
		panic(err)
	}
	fmt.Println(string(strictjson.Marshal(doc)))
	// Output:
	// {"meta":{"question_count":0},"questions":[]}
}
