// Package dsp holds the signal-processing pieces more than one part of the
// recogniser needs: today a radix-2 FFT (the telephone-band test in
// recognizer.BandOf and the speaker features of the diarization add-on).
// It owns no state beyond what its values hold and does no I/O.
package dsp

import (
	"math"
	"math/cmplx"
)

// FFT is an in-place radix-2 transform of one size with its twiddle
// factors computed once. A value is safe for concurrent use: Transform
// only reads it.
type FFT struct {
	n       int
	twiddle []complex128
}

// NewFFT returns the transform of size n, a power of two (panics
// otherwise: sizes are constants of the callers).
func NewFFT(n int) *FFT {
	if n < 2 || n&(n-1) != 0 {
		panic("dsp: FFT size must be a power of two")
	}
	f := &FFT{n: n, twiddle: make([]complex128, n/2)}
	for i := range f.twiddle {
		f.twiddle[i] = cmplx.Exp(complex(0, -2*math.Pi*float64(i)/float64(n)))
	}
	return f
}

// Transform replaces x (len(x) must be the size) by its discrete Fourier
// transform.
func (f *FFT) Transform(x []complex128) {
	n := f.n
	x = x[:n]
	for i, j := 1, 0; i < n; i++ {
		bit := n >> 1
		for ; j&bit != 0; bit >>= 1 {
			j ^= bit
		}
		j ^= bit
		if i < j {
			x[i], x[j] = x[j], x[i]
		}
	}
	for size := 2; size <= n; size <<= 1 {
		step := n / size
		for start := 0; start < n; start += size {
			for k := 0; k < size/2; k++ {
				t := f.twiddle[k*step] * x[start+k+size/2]
				x[start+k+size/2] = x[start+k] - t
				x[start+k] += t
			}
		}
	}
}
