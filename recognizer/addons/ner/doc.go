// Package ner finds named entities and personal data in recognised speech:
// people's names, places, organisations, e-mail and web addresses, phone,
// card, social security and account numbers, dates, times, money, ages and
// a few health terms. It reads transcripts as recognisers write them: lower
// case words, no punctuation, numbers spelled out ("five five five one two
// three four", "john dot smith at example dot com", "the third of march").
//
// It is a pattern and gazetteer recogniser, not a statistical model:
// spoken-number readers (numbers.go) turn digit strings, cardinals,
// ordinals and years into values; numberRun (spoken.go) joins the groups of
// a number read aloud across "dash" and "uh" and reads a digit heard as a
// homophone ("for", "to") between them, returning the words it covers so a
// redaction covers them all; length and checksum rules classify digit
// runs (Luhn for cards, the SSN shape, 7 to 11 digits for phones); cue
// phrases announce codes ("account number", "zip code", "cvv"); embedded
// lists name people (names_given.txt, names_family.txt), places
// (locations.txt) and medical terms; suffixes mark organisations ("acme
// corporation", "bank of america"). Words that are also everyday English
// (ambiguous.txt: "will", "rose", "brown", "china") need context.
//
// Entity types and presets are those of PROTOCOL.md. Presets expand as
// follows (types.go has the reasons):
//
//	GDPR                NAME EMAIL_ADDRESS PHONE_NUMBER LOCATION_ADDRESS LOCATION_ZIP IP_ADDRESS DOB AGE SSN
//	                    PASSPORT_NUMBER DRIVER_LICENSE HEALTHCARE_NUMBER CREDIT_CARD BANK_ACCOUNT ACCOUNT_NUMBER
//	GDPR_SENSITIVE      GDPR + CONDITION DRUG
//	HIPAA_SAFE_HARBOR   NAME LOCATION LOCATION_ADDRESS LOCATION_ZIP DATE DOB AGE PHONE_NUMBER EMAIL_ADDRESS SSN
//	                    HEALTHCARE_NUMBER ACCOUNT_NUMBER BANK_ACCOUNT CREDIT_CARD DRIVER_LICENSE PASSPORT_NUMBER URL IP_ADDRESS
//	HEALTH_INFORMATION  CONDITION DRUG HEALTHCARE_NUMBER
//	PCI                 CREDIT_CARD CREDIT_CARD_EXPIRATION CVV NAME
//	QUEBEC_PRIVACY_ACT  NAME EMAIL_ADDRESS PHONE_NUMBER LOCATION_ADDRESS LOCATION_ZIP DOB AGE SSN HEALTHCARE_NUMBER
//	                    DRIVER_LICENSE PASSPORT_NUMBER BANK_ACCOUNT ACCOUNT_NUMBER CREDIT_CARD IP_ADDRESS CONDITION DRUG
//	CPRA                NAME EMAIL_ADDRESS PHONE_NUMBER LOCATION LOCATION_ADDRESS LOCATION_ZIP IP_ADDRESS SSN DRIVER_LICENSE
//	                    PASSPORT_NUMBER ACCOUNT_NUMBER BANK_ACCOUNT CREDIT_CARD CREDIT_CARD_EXPIRATION CVV CONDITION DOB AGE
//	APPI                NAME DOB LOCATION_ADDRESS PHONE_NUMBER EMAIL_ADDRESS PASSPORT_NUMBER DRIVER_LICENSE HEALTHCARE_NUMBER CONDITION
//	CORE_ENTITIES       NAME ORGANIZATION LOCATION DATE TIME MONEY EMAIL_ADDRESS PHONE_NUMBER
//
// PASSPORT_NUMBER, DRIVER_LICENSE, HEALTHCARE_NUMBER, ACCOUNT_NUMBER,
// BANK_ACCOUNT, ROUTING_NUMBER, CVV and LOCATION_ZIP are found only after
// their cue phrase. An empty type list means every type (pii callers pass
// DefaultPreset instead, as PROTOCOL.md asks).
//
// Sources: every list and rule is hand-written for earshot. The name lists
// were compiled from memory of the most frequent names in public-domain US
// government tables (SSA given names, Census surnames); they are not copies
// of those files. The package keeps no mutable state; the lists are parsed
// once into read-only maps.
package ner
