package sentences

// Word classes used by the boundary and question rules. They are English:
// the embedded engine is English only, and for other languages the cues
// simply do not fire and pauses alone decide.

func set(ws ...string) map[string]bool {
	m := make(map[string]bool, len(ws))
	for _, w := range ws {
		m[w] = true
	}
	return m
}

// nonFinal words cannot end a sentence: articles, prepositions that need
// an object, coordinating and subordinating conjunctions, possessives.
var nonFinal = set("a", "an", "the", "of", "to", "in", "on", "at", "by", "for", "with", "from",
	"into", "onto", "upon", "and", "or", "nor", "but", "if", "because", "although", "though",
	"whether", "than", "my", "your", "our", "their", "its", "whose", "very", "such", "every",
	"each", "i", "we", "they", "he", "she", "you're", "we're", "they're", "i'm", "it's",
	"i've", "we've", "as", "unless", "until")

// nonInitial words cannot start a sentence.
var nonInitial = set("of", "than", "'s", "n't")

// strongOpener words usually start a new sentence in speech.
var strongOpener = set("but", "so", "now", "well", "okay", "ok", "however", "anyway", "yes",
	"yeah", "right", "alright", "please", "thanks", "thank", "hello", "hi", "meanwhile",
	"therefore", "finally", "first", "firstly", "secondly", "next", "actually", "also")

var questionWord = set("what", "why", "how", "who", "whom", "whose", "where", "which", "when")

// quantity words make "how X" a question ("how many", "how long").
var quantity = set("many", "much", "long", "often", "far", "old", "big", "soon", "come")

var auxiliary = set("do", "does", "did", "is", "are", "was", "were", "am", "can", "could",
	"would", "will", "should", "shall", "have", "has", "had", "may", "might", "must",
	"don't", "doesn't", "didn't", "isn't", "aren't", "wasn't", "weren't", "can't",
	"couldn't", "wouldn't", "won't", "shouldn't", "haven't", "hasn't")

var subject = set("i", "you", "we", "they", "he", "she", "it", "there", "this", "that",
	"anyone", "anybody", "someone", "somebody", "everyone", "everybody", "one")

// CanEnd reports whether an English sentence can end with the word (given
// in any case, with or without punctuation): false for articles,
// prepositions that need an object, conjunctions and possessives.
func CanEnd(w string) bool { return !nonFinal[Normalize(w)] }

// CanStart reports whether an English sentence can start with the word:
// false for "of", "than" and clitics.
func CanStart(w string) bool { return !nonInitial[Normalize(w)] }
