package repair

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/contractgateway/gateway/validators"
)

// RepairSystemPrompt is the system prompt of LLM repair (rung 2). Models
// are tuned against its exact wording in the field, so it is never
// paraphrased or extended here; TestPromptsVerbatim pins its bytes.
const RepairSystemPrompt = "You are a JSON repair engine.\n" +
	"You will receive:\n" +
	"1) A violation report describing exactly what is invalid.\n" +
	"2) The original JSON object (or best-effort extracted JSON text).\n" +
	"\n" +
	"Rules:\n" +
	"- Output ONLY a single ```json``` code block with the corrected JSON.\n" +
	"- Make the smallest possible changes to satisfy all violations.\n" +
	"- Do NOT rewrite or rephrase content unless required to fix a violation.\n" +
	"- Preserve all existing fields and values unless a change is necessary.\n" +
	"- Ensure strict JSON validity (no trailing commas, no unescaped newlines)."

// OnlyValidJSONPrompt is the system prompt of LLM repair for contracts whose
// policy names "only-valid-json": a short retry asking for valid JSON
// only, kept byte for byte like RepairSystemPrompt.
const OnlyValidJSONPrompt = "Your previous response was invalid JSON. Please respond ONLY with valid JSON."

// Repair prompt names of contracts.Policy.RepairPrompt.
const (
	PromptRepairEngine  = "repair-engine"
	PromptOnlyValidJSON = "only-valid-json"
)

// systemPrompt returns the system prompt a policy names; anything but
// "only-valid-json" is the repair engine, the documented default.
func systemPrompt(name string) string {
	if name == PromptOnlyValidJSON {
		return OnlyValidJSONPrompt
	}
	return RepairSystemPrompt
}

// RepairPayload is the user message of one LLM repair call:
//
//	VIOLATION_REPORT:
//	<report json>
//
//	ORIGINAL_JSON:
//	<json or raw block>
//
// original is the canonical current document, or the raw extracted text
// when it did not parse.
func RepairPayload(report validators.Report, original string) string {
	return "VIOLATION_REPORT:\n" + string(indentJSON(report)) + "\n\nORIGINAL_JSON:\n" + original
}

// PartialInstruction is the partial regeneration instruction for the item
// array named name ("questions") and the given 0-based indices. For
// "questions" its wording is fixed, like RepairSystemPrompt's, and pinned
// by TestPromptsVerbatim; other item arrays get the same instruction
// without the MCQ-specific meta rules.
func PartialInstruction(name string, indices []int) string {
	list := formatIndices(indices)
	if name == "questions" {
		return "Replace ONLY questions at indices: " + list + ".\n" +
			"Keep meta unchanged (except test_duration_minutes if weights change).\n" +
			"Keep schema_version, question_id and numbering rules.\n" +
			"Return ONLY the full JSON (meta + questions).\n" +
			"All other questions must remain identical."
	}
	return "Replace ONLY " + name + " at indices: " + list + ".\n" +
		"Keep everything outside " + name + " unchanged.\n" +
		"Return ONLY the full JSON.\n" +
		"All other " + name + " must remain identical."
}

// PartialPrompt is the user message of a partial regeneration call: the
// original task (the model needs it to write new content), the instruction,
// the violations of the named items, and the current document.
func PartialPrompt(task, name string, indices []int, violations []validators.Violation, current string) string {
	var b strings.Builder
	if task = strings.TrimSpace(task); task != "" {
		b.WriteString(task)
		b.WriteString("\n\n")
	}
	b.WriteString(PartialInstruction(name, indices))
	b.WriteString("\n\nVIOLATIONS:\n")
	b.Write(indentJSON(violations))
	b.WriteString("\n\nCURRENT_JSON:\n")
	b.WriteString(current)
	return b.String()
}

func formatIndices(indices []int) string {
	parts := make([]string, len(indices))
	for i, n := range indices {
		parts[i] = strconv.Itoa(n)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// NumPredict estimates the reply tokens a model needs to write back a
// document of docBytes bytes. JSON tokenises at roughly three to four bytes a
// token for English text and worse for punctuation-heavy or non-Latin
// content, so bytes/3 approximates the document; it is doubled for what a
// repair may add (an explanation, an option) and for scripts that take more
// tokens per byte, and 256 tokens cover the code fence and a line of prose
// around it. Too small a bound truncates the reply (JSON_TRUNCATED), which
// costs a whole call; too large a bound costs nothing unless the model
// rambles, so the estimate errs high.
func NumPredict(docBytes int) int {
	return docBytes/3*2 + 256
}

// indentJSON encodes x for a prompt: two-space indent, no HTML escaping (a
// "<" in a question must reach the model as written).
func indentJSON(x any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(x); err != nil {
		return []byte("null")
	}
	return bytes.TrimRight(b.Bytes(), "\n")
}
