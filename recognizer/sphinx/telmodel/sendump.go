package telmodel

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// Sendump format limits: a header string longer than this, or a table
// larger than maxMixw entries, is not a PocketSphinx senone dump.
const (
	maxHeaderString = 4096
	maxMixw         = 1 << 26
)

// ErrSendump marks a file that is not a senone dump this package reads.
var ErrSendump = errors.New("telmodel: bad sendump")

// Mixw is a table of mixture weights: W[s][f][d] for senone s, feature
// stream f and density d, each senone's weights per stream summing to one.
type Mixw struct {
	Senones, Features, Densities int
	W                            []float32 // senone-major
}

// ReadSendump parses PocketSphinx's senone dump, the 8-bit quantised mixture
// weights of a PTM or semi-continuous model (the layout ptm_mgau.c and
// s2_semi_mgau.c read, and sphinxtrain's python/cmusphinx/sendump.py):
// length-prefixed NUL-terminated header strings ended by a zero length,
// then, when the header says cluster_count 0 or nothing, int32 rows
// (densities) and columns (senones), then for each feature stream rows x
// columns bytes v, each the weight 1.0001^-(v << mixw_shift). Weights are
// renormalised per senone and stream after dequantisation. Clustered (4-bit)
// dumps are refused.
func ReadSendump(b []byte) (*Mixw, error) {
	r := bytes.NewReader(b)
	order := binary.ByteOrder(binary.LittleEndian)
	first := true
	var feats, shift, clusters = 0, 10, 0
	for {
		var n uint32
		if err := binary.Read(r, order, &n); err != nil {
			return nil, fmt.Errorf("%w: header: %w", ErrSendump, err)
		}
		if first && n > maxHeaderString {
			order = binary.BigEndian
			n = binary.BigEndian.Uint32(binary.LittleEndian.AppendUint32(nil, n))
		}
		first = false
		if n == 0 {
			break
		}
		if n > maxHeaderString {
			return nil, fmt.Errorf("%w: header string of %d bytes", ErrSendump, n)
		}
		s := make([]byte, n)
		if _, err := io.ReadFull(r, s); err != nil {
			return nil, fmt.Errorf("%w: header: %w", ErrSendump, err)
		}
		key, val, _ := strings.Cut(strings.TrimRight(string(s), "\x00"), " ")
		num := func() int { v, _ := strconv.Atoi(strings.Fields(val + " 0")[0]); return v }
		switch key {
		case "feature_count":
			feats = num()
		case "mixw_shift":
			shift = num()
		case "cluster_count":
			clusters = num()
		case "cluster_bits":
			if num() != 8 {
				return nil, fmt.Errorf("%w: cluster_bits %s (only 8-bit dumps)", ErrSendump, val)
			}
		}
	}
	if clusters != 0 {
		return nil, fmt.Errorf("%w: clustered dump (cluster_count %d)", ErrSendump, clusters)
	}
	var rows, cols int32
	if err := binary.Read(r, order, &rows); err != nil {
		return nil, fmt.Errorf("%w: rows: %w", ErrSendump, err)
	}
	if err := binary.Read(r, order, &cols); err != nil {
		return nil, fmt.Errorf("%w: columns: %w", ErrSendump, err)
	}
	if feats < 1 || rows < 1 || cols < 1 || int64(feats)*int64(rows)*int64(cols) > maxMixw {
		return nil, fmt.Errorf("%w: %d streams x %d densities x %d senones", ErrSendump, feats, rows, cols)
	}
	nd, ns := int(rows), int(cols)
	if r.Len() != feats*nd*ns {
		return nil, fmt.Errorf("%w: %d data bytes, want %d", ErrSendump, r.Len(), feats*nd*ns)
	}
	data := b[len(b)-r.Len():]
	m := &Mixw{Senones: ns, Features: feats, Densities: nd, W: make([]float32, ns*feats*nd)}
	logBase := math.Log(1.0001)
	for f := 0; f < feats; f++ {
		for d := 0; d < nd; d++ {
			row := data[(f*nd+d)*ns : (f*nd+d+1)*ns]
			for s, v := range row {
				m.W[(s*feats+f)*nd+d] = float32(math.Exp(-float64(int(v)<<shift) * logBase))
			}
		}
	}
	for i := 0; i < ns*feats; i++ {
		w := m.W[i*nd : (i+1)*nd]
		var sum float64
		for _, v := range w {
			sum += float64(v)
		}
		if sum > 0 {
			for j := range w {
				w[j] = float32(float64(w[j]) / sum)
			}
		}
	}
	return m, nil
}

// S3 writes m as a sphinxtrain "s3" binary mixture_weights file (the
// layout of sphinxtrain's s3file.py: text header, byte-order magic, three
// dimensions, the count, then little-endian float32s).
func (m *Mixw) S3() []byte {
	le := binary.LittleEndian
	var b []byte
	b = append(b, "s3\nversion 1.0\n"...)
	if pad := (len(b) + len("endhdr\n")) & 3; pad != 0 {
		b = append(b, strings.Repeat(" ", 4-pad)...)
	}
	b = append(b, "endhdr\n"...)
	b = le.AppendUint32(b, 0x11223344)
	b = le.AppendUint32(b, uint32(m.Senones))
	b = le.AppendUint32(b, uint32(m.Features))
	b = le.AppendUint32(b, uint32(m.Densities))
	b = le.AppendUint32(b, uint32(len(m.W)))
	for _, v := range m.W {
		b = le.AppendUint32(b, math.Float32bits(v))
	}
	return b
}
