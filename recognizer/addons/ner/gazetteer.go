package ner

import (
	_ "embed"
	"strings"
	"sync"
)

// The gazetteers are embedded text files (see each file's header for its
// source), parsed once on first use into read-only maps.

//go:embed names_given.txt
var givenText string

//go:embed names_family.txt
var familyText string

//go:embed ambiguous.txt
var ambiguousText string

//go:embed locations.txt
var locationsText string

type gazetteer struct {
	given, family, ambiguous map[string]bool
	// places maps a place name (one or more words joined by single
	// spaces) to whether it needs a cue.
	places   map[string]bool
	maxPlace int // longest place name, in words
}

var gazetteers = sync.OnceValue(func() *gazetteer {
	g := &gazetteer{
		given:     wordSet(givenText),
		family:    wordSet(familyText),
		ambiguous: wordSet(ambiguousText),
		places:    map[string]bool{},
	}
	for _, line := range strings.Split(locationsText, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		cue := strings.HasPrefix(line, "?")
		name := strings.Join(strings.Fields(strings.TrimPrefix(line, "?")), " ")
		g.places[name] = cue
		if n := len(strings.Fields(name)); n > g.maxPlace {
			g.maxPlace = n
		}
	}
	return g
})

func wordSet(text string) map[string]bool {
	m := map[string]bool{}
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		for _, w := range strings.Fields(line) {
			m[w] = true
		}
	}
	return m
}

func setOf(words string) map[string]bool { return wordSet(words) }

// Small hand-written lexicons (earshot's own).
var (
	// titles precede a name.
	titles = setOf(`mister mr missus mrs miss ms doctor dr professor prof sir
		madam madame dame lady lord father sister brother reverend captain officer
		detective sergeant judge senator governor president agent nurse`)
	// nameCues are phrases after which the next word is taken as a name
	// even when it is also an everyday word.
	nameCues = []string{"my name is", "name is", "name's", "names", "named", "called",
		"this is", "i am", "i'm", "call me", "ask for", "speak to", "speak with",
		"talk to", "talking to", "speaking with", "dear", "hello", "hi", "thanks", "thank you"}
	// placeCues are words after which an ambiguous place counts.
	placeCues = []string{"in", "from", "to", "near", "at", "visit", "visiting", "visited",
		"across", "around", "outside", "inside", "city of", "state of", "live in",
		"moved to", "born in", "flew to", "via", "throughout"}
	// orgSuffixes end an organisation name ("acme corporation").
	orgSuffixes = setOf(`inc incorporated corp corporation company co ltd limited llc
		plc gmbh bank university college institute hospital clinic group foundation
		association agency airlines airways systems technologies technology partners
		holdings insurance industries enterprises labs laboratories pharmaceuticals
		motors electric energy solutions services consulting capital ventures media
		network networks communications telecom trust society council commission
		authority school academy church federation union club`)
	// orgPrefixes start one ("bank of america", "university of texas").
	orgPrefixes = setOf(`bank university college institute department ministry
		church school academy society council commission federation`)
	// knownOrgs are well-known organisations whose names are not common
	// words.
	knownOrgs = setOf(`google microsoft amazon facebook ibm intel oracle
		walmart verizon comcast paypal mastercard netflix tesla toyota honda
		samsung sony nokia ericsson siemens boeing airbus pfizer nestle unilever
		cisco adobe salesforce spotify uber airbnb twitter linkedin youtube
		instagram whatsapp citibank barclays hsbc fedex ups dhl nasa fbi cia
		unicef nato unesco starbucks mcdonalds ikea nike adidas chevrolet
		volkswagen bmw mercedes`)
	// stopwords never begin or sit inside an organisation name before its
	// suffix.
	stopwords = setOf(`a an the this that these those my your his her its our
		their of to in on at by for with from and or but if as is are was were be
		been being am do does did have has had i you he she it we they me him us
		them what which who whom whose when where why how not no yes so very
		just also then than there here about into over under again more most some
		any each every all both few other such only own same too can will would
		should could may might must shall called call work works worked working
		go goes went gone going get got getting new big local good great
		old second one two three four five six seven eight nine ten
		that's it's i'm you're we're they're he's she's`)
	// conditions are illnesses and medical conditions, one or two words.
	conditions = setOf(`diabetes cancer asthma hypertension depression anxiety
		arthritis dementia alzheimer's alzheimers parkinson's parkinsons epilepsy
		migraine migraines pneumonia bronchitis influenza flu covid covid-19
		coronavirus hepatitis hiv aids tuberculosis leukemia lymphoma melanoma
		obesity stroke schizophrenia bipolar autism adhd insomnia eczema psoriasis
		osteoporosis anemia allergy allergies sepsis measles mumps chickenpox
		shingles malaria cholesterol cirrhosis emphysema copd fibromyalgia lupus
		glaucoma cataracts cataract concussion fracture infection tumor tumour
		ulcer ulcers gout scoliosis tinnitus sclerosis dyslexia angina arrhythmia
		appendicitis`)
	conditionPhrases = []string{"heart disease", "heart attack", "high blood pressure",
		"kidney disease", "kidney failure", "multiple sclerosis", "cystic fibrosis",
		"sleep apnea", "panic attacks", "eating disorder", "breast cancer",
		"lung cancer", "prostate cancer", "type two diabetes", "type one diabetes",
		"blood clot", "back pain", "chronic pain", "heart failure", "broken arm",
		"broken leg"}
	// drugs are common medicines, generic and brand names.
	drugs = setOf(`aspirin ibuprofen paracetamol acetaminophen tylenol advil
		motrin naproxen aleve insulin metformin lisinopril amlodipine atorvastatin
		lipitor simvastatin omeprazole prilosec levothyroxine synthroid
		metoprolol losartan albuterol gabapentin hydrochlorothiazide sertraline
		zoloft fluoxetine prozac citalopram escitalopram lexapro trazodone
		prednisone amoxicillin penicillin azithromycin ciprofloxacin doxycycline
		warfarin coumadin clopidogrel plavix xanax alprazolam valium diazepam
		ativan lorazepam adderall ritalin methylphenidate oxycodone hydrocodone
		vicodin morphine codeine fentanyl tramadol methadone naloxone narcan
		viagra cialis humira ozempic wegovy insulin statins antibiotics
		antidepressants chemotherapy benadryl claritin zyrtec lithium`)
)
