package diarization

import (
	"math"

	"github.com/earshot-dev/earshot/recognizer/dsp"
)

// MFCC analysis at 16 kHz: 25 ms frames every 10 ms, 512-point FFT,
// 40 triangular mel filters from 20 Hz to 7600 Hz, 20 cepstral
// coefficients of which c0 (energy) is dropped.
const (
	sampleRate  = 16000
	frameLen    = 400
	frameHop    = 160
	fftSize     = 512
	numFilters  = 40
	numCeps     = 20
	lowHz       = 20.0
	highHz      = 7600.0
	preEmphasis = 0.97
)

// mfccAnalyzer holds the tables of one analysis; it is cheap to build and
// not shared between goroutines.
type mfccAnalyzer struct {
	window  []float64
	filters [][]float64 // numFilters × (fftSize/2+1)
	dct     [][]float64 // numCeps × numFilters
	buf     []complex128
	fft     *dsp.FFT
}

func newMFCC() *mfccAnalyzer {
	a := &mfccAnalyzer{
		window: make([]float64, frameLen),
		buf:    make([]complex128, fftSize),
		fft:    dsp.NewFFT(fftSize),
	}
	for i := range a.window {
		a.window[i] = 0.54 - 0.46*math.Cos(2*math.Pi*float64(i)/float64(frameLen-1))
	}
	mel := func(hz float64) float64 { return 2595 * math.Log10(1+hz/700) }
	hz := func(m float64) float64 { return 700 * (math.Pow(10, m/2595) - 1) }
	lo, hi := mel(lowHz), mel(highHz)
	points := make([]float64, numFilters+2)
	for i := range points {
		points[i] = hz(lo+(hi-lo)*float64(i)/float64(numFilters+1)) * fftSize / sampleRate
	}
	a.filters = make([][]float64, numFilters)
	for m := 0; m < numFilters; m++ {
		f := make([]float64, fftSize/2+1)
		l, c, r := points[m], points[m+1], points[m+2]
		for k := range f {
			x := float64(k)
			switch {
			case x > l && x <= c:
				f[k] = (x - l) / (c - l)
			case x > c && x < r:
				f[k] = (r - x) / (r - c)
			}
		}
		a.filters[m] = f
	}
	a.dct = make([][]float64, numCeps)
	for n := 0; n < numCeps; n++ {
		row := make([]float64, numFilters)
		for m := range row {
			row[m] = math.Cos(math.Pi * float64(n) * (float64(m) + 0.5) / numFilters)
		}
		a.dct[n] = row
	}
	return a
}

// frames computes the MFCCs (c1..c19) and the log energy of every full
// frame of pcm.
func (a *mfccAnalyzer) frames(pcm []int16) (ceps [][]float64, energy []float64) {
	if len(pcm) < frameLen {
		return nil, nil
	}
	n := 1 + (len(pcm)-frameLen)/frameHop
	ceps = make([][]float64, 0, n)
	energy = make([]float64, 0, n)
	power := make([]float64, fftSize/2+1)
	logMel := make([]float64, numFilters)
	for f := 0; f < n; f++ {
		off := f * frameHop
		e := 0.0
		prev := 0.0
		if off > 0 {
			prev = float64(pcm[off-1])
		}
		for i := 0; i < fftSize; i++ {
			if i >= frameLen {
				a.buf[i] = 0
				continue
			}
			s := float64(pcm[off+i])
			v := (s - preEmphasis*prev) * a.window[i]
			prev = s
			e += s * s
			a.buf[i] = complex(v, 0)
		}
		a.fft.Transform(a.buf)
		for k := range power {
			re, im := real(a.buf[k]), imag(a.buf[k])
			power[k] = re*re + im*im
		}
		for m, filt := range a.filters {
			s := 0.0
			for k, w := range filt {
				if w != 0 {
					s += w * power[k]
				}
			}
			logMel[m] = math.Log(s + 1e-3)
		}
		c := make([]float64, numCeps-1)
		for i := 1; i < numCeps; i++ {
			s := 0.0
			for m, w := range a.dct[i] {
				s += w * logMel[m]
			}
			c[i-1] = s
		}
		ceps = append(ceps, c)
		energy = append(energy, 10*math.Log10(e/frameLen+1e-9))
	}
	return ceps, energy
}
