package telmodel

import (
	"encoding/binary"
	"errors"
	"math"
	"os"
	"testing"

	"github.com/earshot-dev/earshot/recognizer/sphinx"
)

// TestReadSendumpDebian converts Debian's en-us senone dump: 5126 senones
// (the mdef's), 3 streams, 128 densities, each row a distribution, and
// the S3 file carries them in sphinxtrain's layout.
func TestReadSendumpDebian(t *testing.T) {
	raw, err := os.ReadFile(sphinx.DefaultHMM + "/sendump")
	if err != nil {
		t.Fatal(err)
	}
	m, err := ReadSendump(raw)
	if err != nil {
		t.Fatal(err)
	}
	if m.Senones != 5126 || m.Features != 3 || m.Densities != 128 {
		t.Fatalf("shape %d x %d x %d, want 5126 x 3 x 128", m.Senones, m.Features, m.Densities)
	}
	for i := 0; i < m.Senones*m.Features; i++ {
		var sum float64
		for _, v := range m.W[i*m.Densities : (i+1)*m.Densities] {
			if v < 0 || v > 1 || math.IsNaN(float64(v)) {
				t.Fatalf("row %d: weight %v", i, v)
			}
			sum += float64(v)
		}
		if math.Abs(sum-1) > 1e-4 {
			t.Fatalf("row %d sums to %v", i, sum)
		}
	}
	s3 := m.S3()
	hdr := "s3\nversion 1.0\n  endhdr\n"
	if string(s3[:len(hdr)]) != hdr || len(hdr)%4 != 0 {
		t.Fatalf("header %q", s3[:len(hdr)])
	}
	le := binary.LittleEndian
	body := s3[len(hdr):]
	if le.Uint32(body) != 0x11223344 || le.Uint32(body[4:]) != 5126 || le.Uint32(body[8:]) != 3 || le.Uint32(body[12:]) != 128 ||
		int(le.Uint32(body[16:])) != len(m.W) || len(body) != 20+4*len(m.W) {
		t.Fatalf("S3 dimensions or size wrong: %x", body[:20])
	}
}

// TestReadSendumpSmall checks the dequantisation and the refusals on a
// hand-made dump.
func TestReadSendumpSmall(t *testing.T) {
	le := binary.LittleEndian
	str := func(b []byte, s string) []byte {
		b = le.AppendUint32(b, uint32(len(s)+1))
		return append(append(b, s...), 0)
	}
	var b []byte
	b = str(b, "title")
	b = str(b, "feature_count 1")
	b = le.AppendUint32(b, 0)
	b = le.AppendUint32(b, 2) // densities
	b = le.AppendUint32(b, 1) // senones
	b = append(b, 0, 0)       // equal weights
	m, err := ReadSendump(b)
	if err != nil {
		t.Fatal(err)
	}
	if m.W[0] != 0.5 || m.W[1] != 0.5 {
		t.Errorf("weights %v, want [0.5 0.5]", m.W)
	}
	for name, bad := range map[string][]byte{
		"truncated": b[:len(b)-1],
		"empty":     nil,
		"clustered": append(str(str(nil, "t"), "cluster_count 16"), 0, 0, 0, 0),
		"huge":      le.AppendUint32(nil, 1<<30),
	} {
		if _, err := ReadSendump(bad); !errors.Is(err, ErrSendump) {
			t.Errorf("%s: %v, want ErrSendump", name, err)
		}
	}
}
