package access

import (
	"encoding/json"
	"fmt"
)

// FilterList removes from a listing of models (an answer of /api/tags,
// /api/ps or /v1/models) the models p may not use, keeping every other
// member as it is, so that a key sees only its own models. An entry is
// kept when its "name", "model" or "id" is one of p's models.
func (p *Principal) FilterList(kind List, body []byte) ([]byte, error) {
	if p.AllModels() || kind == ListNone {
		return body, nil
	}
	member, fields := "models", []string{"name", "model"}
	if kind == ListOpenAI {
		member, fields = "data", []string{"id"}
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(body, &obj); err != nil {
		return nil, fmt.Errorf("model list: %w", err)
	}
	raw, ok := obj[member]
	if !ok || string(raw) == "null" {
		return body, nil
	}
	var entries []json.RawMessage
	if err := json.Unmarshal(raw, &entries); err != nil {
		return nil, fmt.Errorf("model list: %s: %w", member, err)
	}
	kept := make([]json.RawMessage, 0, len(entries))
	for _, e := range entries {
		var names map[string]json.RawMessage
		if json.Unmarshal(e, &names) != nil {
			continue
		}
		for _, f := range fields {
			var s string
			if json.Unmarshal(names[f], &s) == nil && s != "" && p.AllowsModel(s) {
				kept = append(kept, e)
				break
			}
		}
	}
	b, err := json.Marshal(kept)
	if err != nil {
		return nil, err
	}
	obj[member] = b
	return json.Marshal(obj)
}
