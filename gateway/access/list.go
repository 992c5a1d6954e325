package access

import (
	"encoding/json"
	"fmt"
)

// FilterList removes from a listing of models (an answer of /api/tags,
// /api/ps or /v1/models) the models p may not use, keeping every other
// member as it is, so that a key sees only its own models. An entry is
// kept when its "name", "model" or "id" is one of p's models; an alias
// (/api/experimental/aliases) when its name and its target both are.
func (p *Principal) FilterList(kind List, body []byte) ([]byte, error) {
	if p.AllModels() || kind == ListNone {
		return body, nil
	}
	member, fields, every := "models", []string{"name", "model"}, false
	switch kind {
	case ListOpenAI:
		member, fields = "data", []string{"id"}
	case ListAliases:
		// An alias shows its name and its target: both must be p's.
		member, fields, every = "aliases", []string{"alias", "target"}, true
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
		allowed := 0
		for _, f := range fields {
			var s string
			if json.Unmarshal(names[f], &s) == nil && s != "" && p.AllowsModel(s) {
				allowed++
			}
		}
		if allowed == len(fields) || allowed > 0 && !every {
			kept = append(kept, e)
		}
	}
	b, err := json.Marshal(kept)
	if err != nil {
		return nil, err
	}
	obj[member] = b
	return json.Marshal(obj)
}
