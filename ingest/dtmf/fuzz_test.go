package dtmf_test

import (
	"encoding/binary"
	"testing"

	"github.com/earshot-dev/earshot/ingest/dtmf"
	"github.com/earshot-dev/earshot/ingest/dtmf/dtmftest"
)

// FuzzFilter: any samples, split anywhere, at either rate: no panic; each
// Write returns what the lookahead lets out and Flush the rest, so the
// output is as long as the input; every output sample is the input's or
// silence; keys are DTMF digits, in order, inside the stream.
func FuzzFilter(f *testing.F) {
	tone := make([]int16, 2000)
	dtmftest.Add(tone, dtmftest.Tone(8000, dtmftest.Spec{Digit: '5', Samples: 800, Low: -7, High: -5}), 500)
	seed := []byte{0, 7, 200}
	for _, x := range tone {
		seed = binary.LittleEndian.AppendUint16(seed, uint16(x))
	}
	f.Add(seed)
	f.Add([]byte{1, 0, 0})
	f.Add([]byte{0, 255, 255, 0x7f, 0xff, 0x80, 0x00})
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) < 3 {
			return
		}
		rate := 8000
		if b[0]&1 == 1 {
			rate = 16000
		}
		step1, step2 := int(b[1])*3+1, int(b[2])*7+1
		b = b[3:]
		in := make([]int16, len(b)/2)
		for i := range in {
			in[i] = int16(binary.LittleEndian.Uint16(b[2*i:]))
		}
		fl, err := dtmf.New(rate)
		if err != nil {
			t.Fatal(err)
		}
		var out []int16
		var keys []dtmf.Key
		for i, n := 0, 0; n < len(in); i++ {
			step := step1
			if i%2 == 1 {
				step = step2
			}
			m := min(step, len(in)-n)
			o, k := fl.Write(in[n : n+m])
			n += m
			out, keys = append(out, o...), append(keys, k...)
			if len(out) != max(0, n-fl.Lookahead()) {
				t.Fatalf("%d in, %d out, lookahead %d", n, len(out), fl.Lookahead())
			}
		}
		o, k := fl.Flush()
		out, keys = append(out, o...), append(keys, k...)
		if len(out) != len(in) {
			t.Fatalf("%d samples in, %d out", len(in), len(out))
		}
		for i := range out {
			if out[i] != in[i] && out[i] != 0 {
				t.Fatalf("sample %d: %d in, %d out", i, in[i], out[i])
			}
		}
		var last int64 = -1 << 62
		for _, k := range keys {
			if _, _, ok := dtmf.Frequencies(k.Digit); !ok || k.Duration <= 0 || k.Start < last || k.Start+k.Duration > int64(len(in)) {
				t.Fatalf("key %+v in %d samples (last start %d)", k, len(in), last)
			}
			last = k.Start + k.Duration
		}
	})
}
