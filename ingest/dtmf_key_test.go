package ingest

import (
	"math"
	"strings"
	"testing"
	"time"
)

// TestKeyCheck: the digits Check takes, and what it refuses without
// naming the key.
func TestKeyCheck(t *testing.T) {
	for _, d := range []byte("0123456789*#ABCD") {
		if err := (Key{Digit: d, Duration: 0.1, Source: KeyRFC4733}).Check(); err != nil {
			t.Errorf("%c: %v", d, err)
		}
	}
	for _, k := range []Key{
		{Digit: 'a', Source: KeyRFC4733}, {Digit: 'E', Source: KeyInband}, {Digit: 0, Source: KeySIPInfo},
		{Digit: '5', Source: "fax"}, {Digit: '5', Source: KeyRFC4733, Duration: -1}, {Digit: '5', Source: KeyRFC4733, Duration: math.NaN()},
	} {
		err := k.Check()
		if err == nil || strings.Contains(err.Error(), "5") {
			t.Errorf("%+v: %v", k, err)
		}
	}
	for code, want := range map[int]byte{0: '0', 9: '9', 10: '*', 11: '#', 12: 'A', 15: 'D'} {
		if d, ok := EventDigit(code); !ok || d != want {
			t.Errorf("event %d: %c %v", code, d, ok)
		}
	}
	for _, code := range []int{-1, 16, 255} {
		if _, ok := EventDigit(code); ok {
			t.Errorf("event %d is a key", code)
		}
	}
}

// TestKeyLimiter: a flood of keys within a second passes KeyBurst and the
// second's KeyRate; keys at a person's pace all pass.
func TestKeyLimiter(t *testing.T) {
	var l KeyLimiter
	t0 := time.Unix(1000, 0)
	passed, firsts := 0, 0
	for i := range 10000 {
		ok, first := l.Allow(t0.Add(time.Duration(i) * 100 * time.Microsecond))
		if ok {
			passed++
		}
		if first {
			firsts++
		}
	}
	if passed > KeyBurst+KeyRate+1 || passed < KeyBurst || firsts != 1 || l.Dropped() != 10000-passed {
		t.Errorf("flood of 10000 in 1 s: %d passed, %d first refusals, %d dropped", passed, firsts, l.Dropped())
	}
	var calm KeyLimiter
	for i := range 1000 {
		if ok, _ := calm.Allow(t0.Add(time.Duration(i) * 100 * time.Millisecond)); !ok {
			t.Fatalf("key %d at 10 a second refused", i)
		}
	}
}
