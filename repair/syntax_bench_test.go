package repair

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/contractgateway/gateway/validators/strictjson"
)

// typicalItems are items of seed 004's stages as DeepSeek writes them when
// it breaks JSON: a few faults per item (a swallowed colon, `}], {`, \_, raw
// newlines and unescaped attribute quotes in HTML), among plenty of text that
// only needs copying.
var typicalItems = []string{
	`{
      "anchor_text": "vector database %d",
      "query: "pgvector hnsw index tuning for large tables",
      "section": "Storage and indexing",
      "context_before": "Once the embeddings are stored, the index decides how fast a nearest-neighbour query returns, and how much memory it takes.",
      "context_after": "keeps nearest-neighbour search fast even on millions of rows, at the cost of a longer build.",
      "ref\_id": "ref_%d"
    }], `,
	`{
      "title": "Section %d",
      "content": "<h2>Running the model locally</h2>
<p>Install Ollama, then pull the model you want to use. See the <a href="https://ollama.com/library">model library</a> for the list of available models and their sizes.</p>
<pre><code class='language-bash'>ollama pull llama3.1</code></pre>
<p>Structured output works best with a schema passed as <code>format</code>; the gateway checks the result either way.</p>",
      "order": %d
    },
    `,
}

// denseItems pack a fault into almost every token (single quotes, Python
// literals, comments, missing commas, trailing commas), the worst case for
// the cost of recording changes.
var denseItems = []string{
	`{
      "anchor_text: "vector database %d",
      "query: "pgvector hnsw index tuning",
      "section": "Storage",
      "context_after: "keeps nearest-neighbour search fast
even on millions of rows.",
      "ref\_id": "ref_%d",
    }], `,
	`{
      'anchor_text': 'Ollama %d',
      'query': 'ollama structured outputs',
      'section': None, // filled in later
      'ref_id': 'ref_%d',
    },
    `,
	`{
      "title": "Item %d",
      "content": "<p>See the <a href="https://ollama.com/blog/structured-outputs">post</a> and C:\Users\docs.</p>
<pre><code class="language-bash">ollama run llama3.1</code></pre>",
      "id": %d
      "tags": ["go" "json",]
    },
    `,
}

// brokenDoc builds a broken model output of about size bytes: a think
// section, a fence, and an array of items.
func brokenDoc(size int, items []string) []byte {
	var b strings.Builder
	b.WriteString("<think>\nThe user wants the link plan as JSON.\n</think>\n\n```json\n{\"link_plan\": [\n    ")
	for i := 0; b.Len() < size-40; i++ {
		fmt.Fprintf(&b, items[i%len(items)], i, i)
	}
	b.WriteString("{\"anchor_text\": \"end\"}\n  ]\n}\n```\n")
	return []byte(b.String())
}

func BenchmarkRepairSyntax(b *testing.B) {
	run := func(name string, in []byte) {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(in)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := RepairSyntax(in, SyntaxOptions{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	for _, size := range []int{1 << 10, 10 << 10, 100 << 10, 1 << 20} {
		run(fmt.Sprintf("broken/%dKB", size>>10), brokenDoc(size, typicalItems))
	}
	run("dense/100KB", brokenDoc(100<<10, denseItems))
}

// BenchmarkRepairSyntaxValid compares the fast path on valid input with
// encoding/json.Valid on the same bytes; the difference is the UTF-8 check
// and the copy of the result.
func BenchmarkRepairSyntaxValid(b *testing.B) {
	r, err := RepairSyntax(brokenDoc(100<<10, typicalItems), SyntaxOptions{})
	if err != nil || !json.Valid(r.Text) {
		b.Fatalf("building the valid input: %v", err)
	}
	in := r.Text
	b.Run("RepairSyntax/100KB", func(b *testing.B) {
		b.SetBytes(int64(len(in)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := RepairSyntax(in, SyntaxOptions{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("json.Valid/100KB", func(b *testing.B) {
		b.SetBytes(int64(len(in)))
		b.ReportAllocs()
		for b.Loop() {
			if !json.Valid(in) {
				b.Fatal("invalid")
			}
		}
	})
	// The yardstick: repair of valid input costs no more than 1.2×
	// the strict parse the pipeline runs anyway.
	b.Run("strictjson.Parse/100KB", func(b *testing.B) {
		b.SetBytes(int64(len(in)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := strictjson.Parse(in); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestBrokenDocRepairs keeps the benchmark inputs honest: they must need
// repair, repair must succeed, and no item may be lost.
func TestBrokenDocRepairs(t *testing.T) {
	tests := []struct {
		name  string
		items []string
	}{
		{name: "typical", items: typicalItems},
		{name: "dense", items: denseItems},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := brokenDoc(10<<10, tt.items)
			r, err := RepairSyntax(in, SyntaxOptions{})
			if err != nil || r.Truncated || !json.Valid(r.Text) || len(r.Changes) < 50 {
				t.Fatalf("RepairSyntax(brokenDoc) = %d changes, truncated %v, err %v, valid %v", len(r.Changes), r.Truncated, err, json.Valid(r.Text))
			}
			var doc struct {
				LinkPlan []map[string]any `json:"link_plan"`
			}
			if err := json.Unmarshal(r.Text, &doc); err != nil {
				t.Fatal(err)
			}
			if got, want := len(doc.LinkPlan), strings.Count(string(in), "\n    {")+strings.Count(string(in), "], {"); got != want {
				t.Errorf("RepairSyntax(brokenDoc) kept %d items, want %d", got, want)
			}
		})
	}
}
