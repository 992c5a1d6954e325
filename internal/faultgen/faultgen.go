// Package faultgen builds model output broken the way DeepSeek breaks long
// structured answers (link plans, article sections in HTML), of any size,
// for the syntactic repairer's benchmarks: the testing.B ones in repair and
// the side-by-side program under bench/.
package faultgen

import (
	"fmt"
	"strings"
)

// TypicalItems are items of article-writing answers (link-plan entries,
// HTML sections) as DeepSeek writes them when it breaks JSON: a few faults
// per item (a swallowed colon, `}], {`, \_, raw newlines and unescaped
// attribute quotes in HTML), among plenty of text that only needs copying.
var TypicalItems = []string{
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

// DenseItems pack a fault into almost every token (single quotes, Python
// literals, comments, missing commas, trailing commas), the worst case for
// the cost of recording changes.
var DenseItems = []string{
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

// BrokenDoc builds a broken model output of about size bytes: a think
// section, a fence, and an array of items.
func BrokenDoc(size int, items []string) []byte {
	var b strings.Builder
	b.WriteString("<think>\nThe user wants the link plan as JSON.\n</think>\n\n```json\n{\"link_plan\": [\n    ")
	for i := 0; b.Len() < size-40; i++ {
		fmt.Fprintf(&b, items[i%len(items)], i, i)
	}
	b.WriteString("{\"anchor_text\": \"end\"}\n  ]\n}\n```\n")
	return []byte(b.String())
}
