package params

// Caps on what a request body may hold. SPEC.md leaves them open; each keeps a
// body's decoded size proportional to what a real client sends, and an
// over-cap value is a 400 naming the field.
const (
	// MaxVocabularyItems caps custom_vocabulary_config.vocabulary (and the
	// array form of custom_vocabulary).
	MaxVocabularyItems = 1000
	// MaxPronunciations caps the pronunciations of one vocabulary item.
	MaxPronunciations = 20
	// MaxSpellingEntries caps the keys of custom_spelling_config.spelling_dictionary.
	MaxSpellingEntries = 1000
	// MaxSpellingVariants caps the strings mapped to one spelling_dictionary word.
	MaxSpellingVariants = 100
	// MaxPrompts caps audio_to_llm_config.prompts.
	MaxPrompts = 10
	// MaxTargetLanguages caps translation_config.target_languages.
	MaxTargetLanguages = 20
	// MaxLanguages caps language_config.languages.
	MaxLanguages = 100
	// MaxEntityTypes caps pii_redaction_config.entity_types.
	MaxEntityTypes = 100
	// MaxMetadataKeys caps the top-level keys of custom_metadata.
	MaxMetadataKeys = 64
	// MaxMetadataBytes caps the JSON size of custom_metadata.
	MaxMetadataBytes = 16 << 10
	// MaxURLLength caps audio_url, callback_url and callback_config.url.
	MaxURLLength = 2048
	// MaxPromptLength caps one audio_to_llm prompt and translation_config.context, in bytes.
	MaxPromptLength = 4096
	// MaxWordLength caps a vocabulary value, a pronunciation, a spelling word
	// or variant, an entity type and a model name, in bytes.
	MaxWordLength = 200
	// maxProblems caps the problems one ValidationError lists; the rest are
	// counted in a last entry.
	maxProblems = 64
)
