package ner

import (
	"slices"
	"strings"
	"testing"

	"github.com/earshot-dev/earshot/recognizer"
	"github.com/earshot-dev/earshot/recognizer/addons/addonstest"
)

// utt builds an utterance from text, one second per word.
func utt(text string) recognizer.Utterance {
	var ws []recognizer.Word
	for i, w := range strings.Fields(text) {
		ws = append(ws, recognizer.Word{Word: w, Start: float64(i), End: float64(i) + 0.9, Confidence: 0.9})
	}
	return recognizer.Utterance{Text: text, Words: ws, End: float64(len(ws))}
}

type want struct{ typ, text, value string }

func TestFind(t *testing.T) {
	tests := []struct {
		name  string
		text  string
		types []string
		want  []want
	}{
		{"phone seven digits", "my number is five five five one two three four", nil,
			[]want{{PhoneNumber, "five five five one two three four", "5551234"}}},
		{"phone ten digits with pairs", "call four one five five five five twelve thirty four", []string{PhoneNumber},
			[]want{{PhoneNumber, "four one five five five five twelve thirty four", "4155551234"}}},
		{"phone with oh and double", "it's oh two oh double seven nine four six one two three", []string{PhoneNumber},
			[]want{{PhoneNumber, "oh two oh double seven nine four six one two three", "02077946123"}}},
		{"too short for a phone", "i have five five five apples", []string{PhoneNumber}, nil},
		{"email", "my email is john dot smith at example dot com thanks", nil,
			[]want{{EmailAddress, "john dot smith at example dot com", "john.smith@example.com"}}},
		{"email spelled", "it's j o h n at gmail dot co dot uk", []string{EmailAddress},
			[]want{{EmailAddress, "j o h n at gmail dot co dot uk", "john@gmail.co.uk"}}},
		{"email underscore", "write to mary underscore jones at acme dot org", []string{EmailAddress},
			[]want{{EmailAddress, "mary underscore jones at acme dot org", "mary_jones@acme.org"}}},
		{"at without domain", "i arrived at the station at noon", []string{EmailAddress}, nil},
		{"credit card luhn", "the card is four one one one one one one one one one one one one one one one", []string{CreditCard},
			[]want{{CreditCard, "four one one one one one one one one one one one one one one one", "4111111111111111"}}},
		{"sixteen digits failing luhn are not a card", "four one one one one one one one one one one one one one one two", []string{CreditCard}, nil},
		{"ssn", "my social security number is one two three four five six seven eight nine", []string{SSN},
			[]want{{SSN, "one two three four five six seven eight nine", "123456789"}}},
		{"date ordinal of month", "i was born on the third of march nineteen ninety", []string{Date},
			[]want{{Date, "third of march nineteen ninety", "1990-03-03"}}},
		{"dob beats date", "my date of birth is july fourth two thousand and one", []string{Date, DOB},
			[]want{{DOB, "july fourth two thousand and one", "2001-07-04"}}},
		{"may the verb is not a date", "you may go now", []string{Date}, nil},
		{"may the month", "we met on may second", []string{Date}, []want{{Date, "may second", "--05-02"}}},
		{"time am", "see you at ten thirty a m", []string{Time}, []want{{Time, "ten thirty a m", "10:30"}}},
		{"time oclock", "at seven o'clock", []string{Time}, []want{{Time, "seven o'clock", "7:00"}}},
		{"time half past", "meet at half past nine", []string{Time}, []want{{Time, "half past nine", "9:30"}}},
		{"money", "it cost twenty dollars and fifty cents", []string{Money},
			[]want{{Money, "twenty dollars and fifty cents", "$20.50"}}},
		{"money pounds", "that's five pounds fifty please", []string{Money}, []want{{Money, "five pounds fifty", "£5.50"}}},
		{"money hundred", "a hundred and five euros", []string{Money}, []want{{Money, "a hundred and five euros", "€105"}}},
		{"age", "she is forty two years old", []string{Age}, []want{{Age, "forty two", "42"}}},
		{"full name", "my name is john smith", []string{Name}, []want{{Name, "john smith", "john smith"}}},
		{"given and family", "my name is john smith", []string{NameGiven, NameFamily},
			[]want{{NameGiven, "john", "john"}, {NameFamily, "smith", "smith"}}},
		{"everyday words are not names", "the rose will grant hope", []string{Name}, nil},
		{"titled everyday name", "i spoke to mister brown", []string{Name, NameFamily}, []want{{Name, "brown", "brown"}}},
		{"cued everyday name", "hello my name is grace", []string{NameGiven}, []want{{NameGiven, "grace", "grace"}}},
		{"location multiword", "i live in new york city", []string{Location}, []want{{Location, "new york city", "new york city"}}},
		{"ambiguous place needs cue", "we ate turkey then flew to turkey", []string{Location}, []want{{Location, "turkey", "turkey"}}},
		{"organisation suffix", "i work for acme corporation", []string{Organization}, []want{{Organization, "acme corporation", "acme corporation"}}},
		{"organisation prefix", "an account at bank of america", []string{Organization}, []want{{Organization, "bank of america", "bank of america"}}},
		{"bare suffix is not an org", "i went to the bank", []string{Organization}, nil},
		{"url", "visit www dot example dot com slash help", []string{URL}, []want{{URL, "www dot example dot com slash help", "www.example.com/help"}}},
		{"ip", "ping one nine two dot one six eight dot one dot ten", []string{IPAddress},
			[]want{{IPAddress, "one nine two dot one six eight dot one dot ten", "192.168.1.10"}}},
		{"address", "i live at one twenty three main street", []string{LocationAddress},
			[]want{{LocationAddress, "one twenty three main street", ""}}},
		{"zip", "my zip code is nine four one zero five", []string{LocationZip}, []want{{LocationZip, "nine four one zero five", "94105"}}},
		{"account", "my account number is seven seven one two three four", []string{AccountNumber},
			[]want{{AccountNumber, "seven seven one two three four", "771234"}}},
		{"passport letters", "passport number a b one two three four five six", []string{PassportNumber},
			[]want{{PassportNumber, "a b one two three four five six", "AB123456"}}},
		{"expiry and cvv", "it expires oh four twenty six and the cvv is one two three", []string{CreditCardExpiration, CVV},
			[]want{{CreditCardExpiration, "oh four twenty six", "04/26"}, {CVV, "one two three", "123"}}},
		{"health", "the patient has high blood pressure and takes lisinopril", []string{"HEALTH_INFORMATION"},
			[]want{{Condition, "high blood pressure", "high blood pressure"}, {Drug, "lisinopril", "lisinopril"}}},
		{"unrequested types are ignored", "john smith at five five five one two three four", []string{PhoneNumber},
			[]want{{PhoneNumber, "five five five one two three four", "5551234"}}},
		{"preset pci", "card four one one one one one one one one one one one one one one one for mister jones", []string{"pci"},
			[]want{{CreditCard, "four one one one one one one one one one one one one one one one", "4111111111111111"}, {Name, "jones", "jones"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ents, unsup := Find([]recognizer.Utterance{utt(tt.text)}, tt.types)
			if len(unsup) != 0 {
				t.Errorf("unsupported %v", unsup)
			}
			var got []want
			for _, e := range ents {
				got = append(got, want{e.Type, e.Text, e.Value})
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("Find(%q)\n got  %v\n want %v", tt.text, got, tt.want)
			}
		})
	}
}

func TestEntityPositions(t *testing.T) {
	u := utt("hello my name is john smith from london")
	u.Channel = 1
	ents, _ := Find([]recognizer.Utterance{utt("nothing here"), u}, []string{Name, Location})
	if len(ents) != 2 {
		t.Fatalf("got %d entities, want 2: %+v", len(ents), ents)
	}
	e := ents[0]
	if e.Utterance != 1 || e.Channel != 1 || e.FirstWord != 4 || e.LastWord != 5 || e.Start != 4 || e.End != 5.9 {
		t.Errorf("name entity %+v: wrong position", e)
	}
	if ents[1].Type != Location || ents[1].FirstWord != 7 || ents[1].LastWord != 7 {
		t.Errorf("location entity %+v", ents[1])
	}
}

func TestWordsWithoutTimings(t *testing.T) {
	u := recognizer.Utterance{Text: "call five five five one two three four", Start: 10, End: 18}
	ents, _ := Find([]recognizer.Utterance{u}, []string{PhoneNumber})
	if len(ents) != 1 || ents[0].FirstWord != 1 || ents[0].Start != 11 || ents[0].End != 18 {
		t.Fatalf("got %+v", ents)
	}
}

func TestExpand(t *testing.T) {
	tests := []struct {
		name    string
		in      []string
		has     []string
		hasNot  []string
		unknown []string
	}{
		{"empty means all", nil, Supported(), nil, nil},
		{"gdpr", []string{"GDPR"}, []string{Name, EmailAddress, PhoneNumber, SSN}, []string{Organization, Money}, nil},
		{"hipaa", []string{"HIPAA_SAFE_HARBOR"}, []string{Name, Date, SSN, URL}, []string{Money}, nil},
		{"health", []string{"HEALTH_INFORMATION"}, []string{Condition, Drug}, []string{Name}, nil},
		{"lower case and unknown", []string{"email_address", "FAVOURITE_COLOUR", "favourite_colour"},
			[]string{EmailAddress}, []string{Name}, []string{"FAVOURITE_COLOUR"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			set, unknown := Expand(tt.in)
			for _, h := range tt.has {
				if !slices.Contains(set, h) {
					t.Errorf("%v lacks %s", set, h)
				}
			}
			for _, h := range tt.hasNot {
				if slices.Contains(set, h) {
					t.Errorf("%v has %s", set, h)
				}
			}
			if !slices.Equal(unknown, tt.unknown) {
				t.Errorf("unknown %v, want %v", unknown, tt.unknown)
			}
		})
	}
	for _, p := range Presets() {
		set, unknown := Expand([]string{p})
		if len(set) == 0 || len(unknown) != 0 {
			t.Errorf("preset %s expands to %v (unknown %v)", p, set, unknown)
		}
	}
	_, unsup := Find([]recognizer.Utterance{utt("hi")}, []string{"NAME", "SHOE_SIZE"})
	if !slices.Equal(unsup, []string{"SHOE_SIZE"}) {
		t.Errorf("Find unsupported = %v", unsup)
	}
}

func TestNumberReaders(t *testing.T) {
	tests := []struct {
		text   string
		digits string
		card   int64
		year   int
	}{
		{"five five five", "555", 5, 0},
		{"one hundred and twenty five", "125", 125, 0},
		{"twenty five thousand three hundred", "25300", 25300, 0},
		{"nineteen ninety nine", "1999", 19, 1999},
		{"twenty oh five", "2005", 20, 2005},
		{"two thousand and five", "2005", 2005, 2005},
		{"fifteen hundred", "1500", 1500, 1500},
		{"oh oh", "", 0, 0},
		{"double seven", "77", 0, 0},
		{"1990", "1990", 1990, 1990},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			toks := strings.Fields(tt.text)
			if d, _ := digitString(toks, 0); d != tt.digits {
				t.Errorf("digitString = %q, want %q", d, tt.digits)
			}
			if v, _ := cardinal(toks, 0); v != tt.card {
				t.Errorf("cardinal = %d, want %d", v, tt.card)
			}
			if y, _ := year(toks, 0); y != tt.year {
				t.Errorf("year = %d, want %d", y, tt.year)
			}
		})
	}
	if !luhn("4111111111111111") || luhn("4111111111111112") {
		t.Error("luhn check wrong")
	}
}

// TestRealTranscripts runs Find over real recogniser output: read prose
// about printing has no phone numbers, card numbers or e-mail addresses,
// and the utterance and word indexes of every entity are valid.
func TestRealTranscripts(t *testing.T) {
	for _, clip := range addonstest.GoldenClips {
		tr := addonstest.Load(t, clip)
		ents, _ := Find(tr.Utterances, nil)
		for _, e := range ents {
			if e.Utterance < 0 || e.Utterance >= len(tr.Utterances) {
				t.Fatalf("%s: entity %+v: bad utterance index", clip, e)
			}
			ws := Words(tr.Utterances[e.Utterance])
			if e.FirstWord < 0 || e.LastWord >= len(ws) || e.FirstWord > e.LastWord {
				t.Fatalf("%s: entity %+v: bad word indexes", clip, e)
			}
			switch e.Type {
			case PhoneNumber, CreditCard, EmailAddress, SSN, IPAddress:
				t.Errorf("%s: false %s %q", clip, e.Type, e.Text)
			}
			t.Logf("%s: %s %q", clip, e.Type, e.Text)
		}
	}
}
