package validators

// Codes lists every violation code the validators emit, by class: logs,
// metrics and clients depend on them, so a code is added here when a rule
// starts emitting it and never renamed. Shape normalisation has codes of
// its own, warnings of class SCHEMA: SHAPE_UNWRAPPED for a
// {"data": …} style wrapper removed, SHAPE_WRAPPED for a lone object put in
// an array.
var Codes = map[string]Class{
	"NO_JSON_BLOCK":        ClassParse,
	"MULTIPLE_JSON_BLOCKS": ClassParse,
	"JSON_SYNTAX":          ClassParse,
	"JSON_TRUNCATED":       ClassParse,

	"SCHEMA_REQUIRED":    ClassSchema,
	"SCHEMA_TYPE":        ClassSchema,
	"SCHEMA_ENUM":        ClassSchema,
	"SCHEMA_CONST":       ClassSchema,
	"SCHEMA_RANGE":       ClassSchema,
	"SCHEMA_LENGTH":      ClassSchema,
	"SCHEMA_PATTERN":     ClassSchema,
	"SCHEMA_FORMAT":      ClassSchema,
	"SCHEMA_ADDITIONAL":  ClassSchema,
	"SCHEMA_UNIQUE":      ClassSchema,
	"SCHEMA_COMPOSITION": ClassSchema,
	"SCHEMA_OTHER":       ClassSchema,
	"SHAPE_UNWRAPPED":    ClassSchema,
	"SHAPE_WRAPPED":      ClassSchema,

	"QUESTION_COUNT_MISMATCH":       ClassSemantic,
	"DIFFICULTY_PROFILE_SUM":        ClassSemantic,
	"DIFFICULTY_PROFILE_MISMATCH":   ClassSemantic,
	"TEST_DURATION_MISMATCH":        ClassSemantic,
	"ANSWER_RANGE":                  ClassSemantic,
	"OPTIONS_COUNT":                 ClassSemantic,
	"DUPLICATE_OPTIONS":             ClassSemantic,
	"WEIGHT_INVALID":                ClassSemantic,
	"COGNITIVE_LEVEL_MISMATCH":      ClassSemantic,
	"EXTENDED_EXPLANATION_NOT_NULL": ClassSemantic,
	"EXTENDED_EXPLANATION_MISSING":  ClassSemantic,
	"EXTENDED_EXPLANATION_INVALID":  ClassSemantic,
	"EXTENDED_EXPLANATION_STEPS":    ClassSemantic,
	"QUESTION_ID_SEQUENCE":          ClassSemantic,
	"QUESTION_ID_DUPLICATE":         ClassSemantic,
	"QUESTION_NUMBERING":            ClassSemantic,
	"FORBIDDEN_OPTION":              ClassSemantic,
	"CODE_FENCE_MISSING":            ClassSemantic,
	"CODE_LINE_NUMBERS":             ClassSemantic,
	"DUPLICATE_QUESTION":            ClassSemantic,
	"SCORE_MISMATCH":                ClassSemantic,
	"DURATION_RANGE":                ClassSemantic,
	"EVENT_NEEDS_QUESTION":          ClassSemantic,
	"PLAN_IDS":                      ClassSemantic,
	// CHECK_ERROR is a contract's check that could not be evaluated (a
	// division by zero, its cost limit); the codes of the checks
	// themselves are the contract author's.
	"CHECK_ERROR": ClassSemantic,
}
