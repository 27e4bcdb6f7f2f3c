package remote

import (
	"slices"
	"strings"
)

// specLanguages are the transcription language codes of SPEC.md §2.6, in
// its order. They are the languages Whisper models detect (Whisper's own
// list, without "yue", which maps to "zh").
var specLanguages = []string{
	"af", "am", "ar", "as", "az", "ba", "be", "bg", "bn", "bo", "br", "bs", "ca", "cs", "cy", "da", "de", "el",
	"en", "es", "et", "eu", "fa", "fi", "fo", "fr", "gl", "gu", "ha", "haw", "he", "hi", "hr", "ht", "hu", "hy",
	"id", "is", "it", "ja", "jw", "ka", "kk", "km", "kn", "ko", "la", "lb", "ln", "lo", "lt", "lv", "mg", "mi",
	"mk", "ml", "mn", "mr", "ms", "mt", "my", "ne", "nl", "nn", "no", "oc", "pa", "pl", "ps", "pt", "ro", "ru",
	"sa", "sd", "si", "sk", "sl", "sn", "so", "sq", "sr", "su", "sv", "sw", "ta", "te", "tg", "th", "tk", "tl",
	"tr", "tt", "uk", "ur", "uz", "vi", "yi", "yo", "zh",
}

// SpecLanguages returns a copy of the transcription language codes of
// SPEC.md §2.6: what an engine with an empty Config.Languages serves.
func SpecLanguages() []string { return slices.Clone(specLanguages) }

// languageNames maps the language names servers report (Whisper's
// tokenizer LANGUAGES and its TO_LANGUAGE_CODE aliases; whisper.cpp and
// the OpenAI API answer "english", faster-whisper servers "en") to codes.
var languageNames = map[string]string{
	"afrikaans": "af", "albanian": "sq", "amharic": "am", "arabic": "ar", "armenian": "hy", "assamese": "as",
	"azerbaijani": "az", "bashkir": "ba", "basque": "eu", "belarusian": "be", "bengali": "bn", "bosnian": "bs",
	"breton": "br", "bulgarian": "bg", "burmese": "my", "cantonese": "zh", "castilian": "es", "catalan": "ca",
	"chinese": "zh", "croatian": "hr", "czech": "cs", "danish": "da", "dutch": "nl", "english": "en",
	"estonian": "et", "faroese": "fo", "finnish": "fi", "flemish": "nl", "french": "fr", "galician": "gl",
	"georgian": "ka", "german": "de", "greek": "el", "gujarati": "gu", "haitian": "ht", "haitian creole": "ht",
	"hausa": "ha", "hawaiian": "haw", "hebrew": "he", "hindi": "hi", "hungarian": "hu", "icelandic": "is",
	"indonesian": "id", "italian": "it", "japanese": "ja", "javanese": "jw", "kannada": "kn", "kazakh": "kk",
	"khmer": "km", "korean": "ko", "lao": "lo", "latin": "la", "latvian": "lv", "letzeburgesch": "lb",
	"lingala": "ln", "lithuanian": "lt", "luxembourgish": "lb", "macedonian": "mk", "malagasy": "mg",
	"malay": "ms", "malayalam": "ml", "maltese": "mt", "mandarin": "zh", "maori": "mi", "marathi": "mr",
	"moldavian": "ro", "moldovan": "ro", "mongolian": "mn", "myanmar": "my", "nepali": "ne", "norwegian": "no",
	"nynorsk": "nn", "occitan": "oc", "panjabi": "pa", "pashto": "ps", "persian": "fa", "polish": "pl",
	"portuguese": "pt", "punjabi": "pa", "pushto": "ps", "romanian": "ro", "russian": "ru", "sanskrit": "sa",
	"serbian": "sr", "shona": "sn", "sindhi": "sd", "sinhala": "si", "sinhalese": "si", "slovak": "sk",
	"slovenian": "sl", "somali": "so", "spanish": "es", "sundanese": "su", "swahili": "sw", "swedish": "sv",
	"tagalog": "tl", "tajik": "tg", "tamil": "ta", "tatar": "tt", "telugu": "te", "thai": "th", "tibetan": "bo",
	"turkish": "tr", "turkmen": "tk", "ukrainian": "uk", "urdu": "ur", "uzbek": "uz", "valencian": "ca",
	"vietnamese": "vi", "welsh": "cy", "yiddish": "yi", "yoruba": "yo",
	"yue": "zh", "jv": "jw", // codes outside the SPEC list with a SPEC equivalent
}

// languageCode maps a server's language ("en", "English", "en-US",
// "english") to a SPEC.md §2.6 code, or "" when it names none.
func languageCode(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	if s == "" {
		return ""
	}
	if c, ok := languageNames[s]; ok {
		return c
	}
	if _, found := slices.BinarySearch(specLanguages, s); found {
		return s
	}
	// BCP 47 tags ("en-US", "pt_BR"): the primary subtag.
	if i := strings.IndexAny(s, "-_"); i > 0 {
		if _, found := slices.BinarySearch(specLanguages, s[:i]); found {
			return s[:i]
		}
	}
	return ""
}
