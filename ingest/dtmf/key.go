package dtmf

// Key is one DTMF key found in the stream. Its digit is a card digit as
// often as not: callers must not log it.
type Key struct {
	// Digit is '0'-'9', '*', '#' or 'A'-'D'.
	Digit byte
	// Start is the tone's first sample, counted from the first sample
	// written to the Filter.
	Start int64
	// Duration is the tone's length in samples.
	Duration int64
}

// Seconds returns the key's start and duration in seconds at rate Hz.
func (k Key) Seconds(rate int) (start, duration float64) {
	return float64(k.Start) / float64(rate), float64(k.Duration) / float64(rate)
}

// digits is the DTMF keypad: row (low group) by column (high group).
var digits = [4][4]byte{
	{'1', '2', '3', 'A'},
	{'4', '5', '6', 'B'},
	{'7', '8', '9', 'C'},
	{'*', '0', '#', 'D'},
}

// Low and High are the DTMF frequencies in Hz (ITU-T Q.23): the row and
// column of each key.
var (
	Low  = [4]float64{697, 770, 852, 941}
	High = [4]float64{1209, 1336, 1477, 1633}
)

// Frequencies returns the two frequencies of digit d (low group first);
// ok is false when d is not a DTMF digit.
func Frequencies(d byte) (low, high float64, ok bool) {
	for r := range digits {
		for c := range digits[r] {
			if digits[r][c] == d {
				return Low[r], High[c], true
			}
		}
	}
	return 0, 0, false
}
