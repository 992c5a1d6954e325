package mcq

import (
	"bytes"
	"strings"
	"unicode/utf8"

	"github.com/contractgateway/gateway/contracts/celenv"
)

// mcqForbiddenPhrases are catch-all options in English, German, Russian,
// French and Spanish, written as they read; New normalises them the
// way options are normalised, so that case, punctuation and spacing never
// matter.
var mcqForbiddenPhrases = []string{
	// English.
	"all of the above", "none of the above", "all the above", "none the above",
	"all of these", "none of these", "all of them are correct", "none of them is correct",
	"all of the options", "none of the options", "all of the answers", "none of the answers",
	"all answers are correct", "all options are correct", "all are correct",
	"none are correct", "none is correct", "neither of the above", "both of the above",
	"all of the mentioned", "none of the mentioned",
	// German.
	"alle oben genannten", "alle der oben genannten", "alle genannten", "alle der genannten",
	"keine der genannten", "keine der oben genannten", "keine der obigen", "alle obigen",
	"keine davon", "keine der antworten", "keine antwort ist richtig", "keine antwort ist korrekt",
	"alle antworten sind richtig", "alle antworten sind korrekt", "alle aussagen sind richtig",
	"alle aussagen sind korrekt", "keine der aussagen",
	// Russian (ё is normalised to е).
	"все вышеперечисленные", "все вышеперечисленное", "все выше перечисленные",
	"все перечисленные", "все перечисленное", "ничего из вышеперечисленного",
	"ничего из перечисленного", "ни один из вышеперечисленных", "ни одно из вышеперечисленного",
	"ни один из перечисленных", "ни один из вариантов", "все ответы верны", "все ответы правильные",
	"все варианты верны", "все варианты правильные", "нет правильного ответа",
	// French and Spanish.
	"toutes les réponses", "aucune de ces réponses", "aucune des réponses",
	"todas las anteriores", "ninguna de las anteriores", "todas las respuestas",
}

// mcqForbiddenPatterns catch "both A and B" with any pair of option
// letters; mcqLetter stands for one letter a–f (or Cyrillic а–е).
var mcqForbiddenPatterns = []string{
	"both " + mcqLetter + " and " + mcqLetter,
	"sowohl " + mcqLetter + " als auch " + mcqLetter,
	"и " + mcqLetter + " и " + mcqLetter,
}

// mcqLetter is the placeholder for an option letter in a forbidden pattern.
const mcqLetter = "\x00letter"

// isForbidden reports whether an option contains a catch-all phrase as
// whole words, ignoring case, punctuation and spacing.
func (m *Rules) isForbidden(option string, sc *mcqScratch) bool {
	words := sc.words(option)
	for i, sp := range words {
		for _, rest := range m.forbidden[string(sc.word(sp))] {
			if sc.match(words[i+1:], rest) {
				return true
			}
		}
	}
	return false
}

// match reports whether the words at spans start with pattern's.
func (sc *mcqScratch) match(spans [][2]int, pattern []string) bool {
	if len(spans) < len(pattern) {
		return false
	}
	for j, p := range pattern {
		w := sc.word(spans[j])
		if p == mcqLetter {
			r, size := utf8.DecodeRune(w)
			if size != len(w) || !(r >= 'a' && r <= 'f' || r >= 'а' && r <= 'е') {
				return false
			}
			continue
		}
		if string(w) != p {
			return false
		}
	}
	return true
}

// mcqScratch holds buffers that one Check call reuses for every string it
// splits into words, so that the word-based rules allocate only while the
// buffers grow. A pack is shared by concurrent requests; its scratch
// space therefore lives in the call, never in the pack.
type mcqScratch struct {
	buf   []byte
	spans [][2]int
}

// words splits s into its words as mcqNormalize folds them: the words of
// CEL's words() (celenv.AppendWords), with ё as е. It returns where each
// word is in the scratch buffer (word reads one); the result is valid
// until the next call.
func (sc *mcqScratch) words(s string) [][2]int {
	sc.buf, sc.spans = celenv.AppendWords(s, sc.buf[:0], sc.spans[:0])
	// The words are lower case, so Ё is ё by now; ё and е are two bytes
	// each in UTF-8, so the fold is made in place.
	for i := 0; ; {
		j := bytes.Index(sc.buf[i:], yo)
		if j < 0 {
			break
		}
		i += j + copy(sc.buf[i+j:], ye)
	}
	return sc.spans
}

// word is the word at sp, a span words returned.
func (sc *mcqScratch) word(sp [2]int) []byte { return sc.buf[sp[0]:sp[1]] }

var yo, ye = []byte("ё"), []byte("е")

// mcqNormalize folds text the way option and question words are compared:
// lower case, ё as е, every run of characters other than letters and
// digits as one space, no leading or trailing space.
func mcqNormalize(s string) string {
	var sc mcqScratch
	var b strings.Builder
	for i, sp := range sc.words(s) {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.Write(sc.word(sp))
	}
	return b.String()
}
