package ner

import (
	"slices"
	"strings"
)

// Entity types, spelled as in PROTOCOL.md ("Values SPEC leaves open").
const (
	Name                 = "NAME"
	NameGiven            = "NAME_GIVEN"
	NameFamily           = "NAME_FAMILY"
	EmailAddress         = "EMAIL_ADDRESS"
	PhoneNumber          = "PHONE_NUMBER"
	SSN                  = "SSN"
	CreditCard           = "CREDIT_CARD"
	CreditCardExpiration = "CREDIT_CARD_EXPIRATION"
	CVV                  = "CVV"
	BankAccount          = "BANK_ACCOUNT"
	RoutingNumber        = "ROUTING_NUMBER"
	AccountNumber        = "ACCOUNT_NUMBER"
	Date                 = "DATE"
	DOB                  = "DOB"
	Time                 = "TIME"
	Age                  = "AGE"
	Money                = "MONEY"
	Location             = "LOCATION"
	LocationAddress      = "LOCATION_ADDRESS"
	LocationZip          = "LOCATION_ZIP"
	IPAddress            = "IP_ADDRESS"
	URL                  = "URL"
	PassportNumber       = "PASSPORT_NUMBER"
	DriverLicense        = "DRIVER_LICENSE"
	Organization         = "ORGANIZATION"
	HealthcareNumber     = "HEALTHCARE_NUMBER"
	Condition            = "CONDITION"
	Drug                 = "DRUG"
)

// DefaultPreset is what pii_redaction_config.entity_types means when it is
// empty (PROTOCOL.md). Find itself treats an empty list as "every type".
const DefaultPreset = "GDPR"

// supported lists every single type Find can detect, in the order used to
// break ties between overlapping entities of equal length (earlier wins).
var supported = []string{
	EmailAddress, URL, IPAddress, CreditCard, CreditCardExpiration, CVV,
	RoutingNumber, BankAccount, AccountNumber, PassportNumber, DriverLicense,
	HealthcareNumber, SSN, PhoneNumber, LocationZip, DOB, Date, Time, Money,
	Age, LocationAddress, Organization, Location, Name, NameGiven, NameFamily,
	Condition, Drug,
}

// Supported returns every single entity type Find detects (all types
// PROTOCOL.md lists), in tie-break priority order.
func Supported() []string { return slices.Clone(supported) }

// presets maps each preset to the single types it stands for. The choice
// follows what each law or standard names as personal data; it is ours
// (SPEC.md does not define them) and is documented in doc.go.
var presets = map[string][]string{
	// EU GDPR art. 4(1): data identifying a person directly or indirectly:
	// name, contact details, identification numbers, online identifiers,
	// address, birth date and age, financial account identifiers.
	"GDPR": {Name, EmailAddress, PhoneNumber, LocationAddress, LocationZip,
		IPAddress, DOB, Age, SSN, PassportNumber, DriverLicense, HealthcareNumber,
		CreditCard, BankAccount, AccountNumber},
	// GDPR art. 9 special categories on top of GDPR; of those, health is the
	// one earshot can detect.
	"GDPR_SENSITIVE": {Name, EmailAddress, PhoneNumber, LocationAddress,
		LocationZip, IPAddress, DOB, Age, SSN, PassportNumber, DriverLicense,
		HealthcareNumber, CreditCard, BankAccount, AccountNumber, Condition, Drug},
	// HIPAA Safe Harbor, 45 CFR 164.514(b)(2): the 18 identifiers that
	// earshot can hear (names, geography below state, dates and ages,
	// phone, email, SSN, record/plan/account/licence numbers, URLs, IPs).
	"HIPAA_SAFE_HARBOR": {Name, Location, LocationAddress, LocationZip, Date,
		DOB, Age, PhoneNumber, EmailAddress, SSN, HealthcareNumber,
		AccountNumber, BankAccount, CreditCard, DriverLicense, PassportNumber,
		URL, IPAddress},
	// Health information itself.
	"HEALTH_INFORMATION": {Condition, Drug, HealthcareNumber},
	// PCI DSS cardholder data and sensitive authentication data.
	"PCI": {CreditCard, CreditCardExpiration, CVV, Name},
	// Quebec Law 25: personal information, including health and financial.
	"QUEBEC_PRIVACY_ACT": {Name, EmailAddress, PhoneNumber, LocationAddress,
		LocationZip, DOB, Age, SSN, HealthcareNumber, DriverLicense,
		PassportNumber, BankAccount, AccountNumber, CreditCard, IPAddress,
		Condition, Drug},
	// California CPRA personal and sensitive personal information.
	"CPRA": {Name, EmailAddress, PhoneNumber, Location, LocationAddress,
		LocationZip, IPAddress, SSN, DriverLicense, PassportNumber,
		AccountNumber, BankAccount, CreditCard, CreditCardExpiration, CVV,
		Condition, DOB, Age},
	// Japan APPI: personal information and individual identification codes
	// (passport, driving licence, health insurance), plus medical history.
	"APPI": {Name, DOB, LocationAddress, PhoneNumber, EmailAddress,
		PassportNumber, DriverLicense, HealthcareNumber, Condition},
	// The general-purpose named entities.
	"CORE_ENTITIES": {Name, Organization, Location, Date, Time, Money,
		EmailAddress, PhoneNumber},
}

// Presets returns the preset names Expand understands.
func Presets() []string {
	out := make([]string, 0, len(presets))
	for k := range presets {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// Expand turns a request's entity_types (single types and presets, any
// case) into the set of single types to detect, without duplicates, in
// priority order. Names it does not know are returned in unknown, in
// request order. An empty list expands to every supported type.
func Expand(types []string) (set []string, unknown []string) {
	want := map[string]bool{}
	if len(types) == 0 {
		for _, t := range supported {
			want[t] = true
		}
	}
	for _, t := range types {
		t = strings.ToUpper(strings.TrimSpace(t))
		if p, ok := presets[t]; ok {
			for _, s := range p {
				want[s] = true
			}
			continue
		}
		if slices.Contains(supported, t) {
			want[t] = true
			continue
		}
		if !slices.Contains(unknown, t) {
			unknown = append(unknown, t)
		}
	}
	for _, t := range supported {
		if want[t] {
			set = append(set, t)
		}
	}
	return set, unknown
}

func priority(t string) int {
	if i := slices.Index(supported, t); i >= 0 {
		return i
	}
	return len(supported)
}
