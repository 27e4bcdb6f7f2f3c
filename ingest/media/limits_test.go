package media

import (
	"errors"
	"testing"
	"time"
)

// TestCheckLimits pins the bounds on probed audio: at most 8 channels, at
// most MaxDuration, and channels times duration within MaxDecodedBytes,
// whose default takes two channels of the full MaxDuration and no more.
func TestCheckLimits(t *testing.T) {
	h := time.Hour.Seconds()
	small := &Options{MaxDuration: time.Minute, MaxDecodedBytes: 2 * DecodedBytesPerSecond} // 2 channel-seconds
	tests := []struct {
		name string
		info Info
		o    *Options
		want error
	}{
		{"mono of the full 4h", Info{Channels: 1, Duration: 4 * h}, nil, nil},
		{"a call: 2 channels of the full 4h", Info{Channels: 2, Duration: 4 * h}, nil, nil},
		{"3 channels of 4h", Info{Channels: 3, Duration: 4 * h}, nil, ErrTooMuchAudio},
		{"the probe: 8 channels of 3h59m", Info{Channels: 8, Duration: 4*h - 60}, nil, ErrTooMuchAudio},
		{"8 channels of 1h", Info{Channels: 8, Duration: h}, nil, nil},
		{"9 channels", Info{Channels: 9, Duration: 1}, nil, ErrTooManyChannels},
		{"10 hours", Info{Channels: 1, Duration: 10 * h}, nil, ErrTooLong},
		{"a header's absurd duration", Info{Channels: 8, Duration: 1e300}, nil, ErrTooLong},
		{"unknown duration", Info{Channels: 8}, nil, nil},
		{"within a small budget", Info{Channels: 2, Duration: 1}, small, nil},
		{"over a small budget", Info{Channels: 2, Duration: 1.5}, small, ErrTooMuchAudio},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckLimits(tt.info, tt.o)
			if tt.want == nil && err != nil || !errors.Is(err, tt.want) {
				t.Fatalf("CheckLimits(%+v) = %v, want %v", tt.info, err, tt.want)
			}
			if errors.Is(err, ErrTooManyChannels) && !errors.Is(err, ErrUnsupported) {
				t.Errorf("%v is not ErrUnsupported too", err)
			}
		})
	}
}

// TestDecodeTooMuchAudio: Decode refuses audio whose channels times
// duration would pass MaxDecodedBytes before decoding it, in Go (WAV) and
// through ffmpeg, and stops ffmpeg's output at it when the container does
// not say how long it is.
func TestDecodeTooMuchAudio(t *testing.T) {
	stereo := Format{LinearPCM, 16, 16000, 2}
	wav := writeFile(t, "stereo.wav", makeWAV(t, stereo, encodeSamples(t, stereo, tones(2, 16000, 16000*2, 0.5)), wavOpts{})) // 2 s
	fits := &Options{MaxDecodedBytes: 4 * DecodedBytesPerSecond}                                                              // 4 channel-seconds
	over := &Options{MaxDecodedBytes: 3 * DecodedBytesPerSecond}
	p, err := Decode(t.Context(), wav, fits)
	if err != nil || len(p.Channels) != 2 || len(p.Channels[0]) != 2*OutputRate {
		t.Fatalf("within the bound: %v", err)
	}
	if _, err := Decode(t.Context(), wav, over); !errors.Is(err, ErrTooMuchAudio) {
		t.Fatalf("wav over the bound: err = %v, want ErrTooMuchAudio", err)
	}

	needFFmpeg(t)
	flac := ffmpegMake(t, wav, "stereo.flac")
	if _, err := Decode(t.Context(), flac, fits); err != nil {
		t.Fatalf("flac within the bound: %v", err)
	}
	if _, err := Decode(t.Context(), flac, over); !errors.Is(err, ErrTooMuchAudio) {
		t.Fatalf("flac over the bound: err = %v, want ErrTooMuchAudio", err)
	}
	info, err := Probe(t.Context(), flac, nil)
	if err != nil {
		t.Fatal(err)
	}
	info.Duration = 0 // as if the container did not say
	o := *over
	o.SetDefaults()
	if _, err := ffmpegDecode(t.Context(), flac, info, &o); !errors.Is(err, ErrTooMuchAudio) {
		t.Fatalf("flac output over the bound: err = %v, want ErrTooMuchAudio", err)
	}
}
