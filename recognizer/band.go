package recognizer

import (
	"math"

	"github.com/earshot-dev/earshot/recognizer/dsp"
)

// Band analysis constants. Telephone audio (G.711, AMR-NB ...) carries
// 300-3400 Hz; whatever container it is later put in, nothing of the
// speech lies above 4 kHz. Wideband speech puts a few percent of its energy
// there (fricatives, bursts): over the developer test set 0.03 % (a short,
// dull clip) to 7 %, while its G.711 renditions carry under 0.0001 % after
// earshot's resampler and under 0.002 % once re-encoded as a 44.1 kHz MP3.
// The threshold, 0.01 %, sits between the two with margin on each side.
const (
	bandFFT = 512 // 32 ms at 16 kHz
	// NarrowbandEdge is the frequency above which a telephone channel
	// carries no speech, Hz.
	NarrowbandEdge = 4000
	// NarrowbandRatio is the largest share of energy above NarrowbandEdge,
	// relative to the energy from 100 Hz up, that counts as narrowband.
	NarrowbandRatio = 0.0001
	// bandMaxFrames bounds the analysis: frames spread evenly over at most
	// this many (about 4 minutes of audio read at 16 kHz).
	bandMaxFrames = 8192
)

// Band is what BandOf found about a recording's bandwidth.
type Band struct {
	// Narrowband is true when the audio is band-limited to the telephone
	// band: a source rate below 16 kHz, or almost no energy above
	// NarrowbandEdge.
	Narrowband bool
	// ByRate is set when the sample rate alone decided (no analysis).
	ByRate bool
	// HighRatio is the share of energy above NarrowbandEdge (0..1) when
	// the spectrum decided.
	HighRatio float64
}

// BandOf decides whether 16 kHz audio decoded from a source at sourceRate
// Hz is telephone-band: any source rate below SampleRate is; otherwise the
// spectrum decides (energy above NarrowbandEdge at most NarrowbandRatio of
// the total from 100 Hz up, summed over every channel). Silence and audio
// too short to analyse count as wideband.
func BandOf(sourceRate int, channels [][]int16) Band {
	if sourceRate > 0 && sourceRate < SampleRate {
		return Band{Narrowband: true, ByRate: true}
	}
	var frames int
	for _, ch := range channels {
		frames += len(ch) / bandFFT
	}
	if frames == 0 {
		return Band{HighRatio: 1}
	}
	step := max(1, frames/bandMaxFrames)
	win := make([]float64, bandFFT)
	for i := range win {
		win[i] = 0.5 - 0.5*math.Cos(2*math.Pi*float64(i)/bandFFT)
	}
	buf := make([]complex128, bandFFT)
	fft := dsp.NewFFT(bandFFT)
	lo := 100 * bandFFT / SampleRate
	edge := NarrowbandEdge * bandFFT / SampleRate
	var low, high float64
	n := 0
	for _, ch := range channels {
		for off := 0; off+bandFFT <= len(ch); off += bandFFT {
			if n++; (n-1)%step != 0 {
				continue
			}
			for i := range buf {
				buf[i] = complex(float64(ch[off+i])*win[i], 0)
			}
			fft.Transform(buf)
			for k := lo; k <= bandFFT/2; k++ {
				p := real(buf[k])*real(buf[k]) + imag(buf[k])*imag(buf[k])
				if k > edge {
					high += p
				} else {
					low += p
				}
			}
		}
	}
	if low+high == 0 {
		return Band{HighRatio: 1}
	}
	r := high / (low + high)
	return Band{Narrowband: r <= NarrowbandRatio, HighRatio: r}
}
