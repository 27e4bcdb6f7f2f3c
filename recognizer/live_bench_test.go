package recognizer_test

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/earshot-dev/earshot/params"

	"github.com/earshot-dev/earshot/recognizer"
)

// BenchmarkLive measures the CPU one live session costs per second of
// audio (one goroutine, so wall time is CPU time): a 8.7 s read-speech
// clip with default settings and partials on, streamed in 20 ms chunks as
// fast as it goes. Metric cpu-ms/audio-s.
//
//	go test -run '^$' -bench BenchmarkLive$ ./recognizer
func BenchmarkLive(b *testing.B) {
	e := liveEngine(b, 1)
	_, pcm := liveClip(b, "ls-test-clean-1995-1837-0001.wav")
	seconds := float64(len(pcm[0])) / recognizer.SampleRate
	for b.Loop() {
		l, err := recognizer.NewLive(e, recognizer.LiveConfig{Endpointing: params.DefaultEndpointing(), Partials: true}, func(recognizer.Event) {})
		if err != nil {
			b.Fatal(err)
		}
		streamLive(b, l, pcm)
		l.Flush(b.Context())
		l.Close()
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N)/seconds, "cpu-ms/audio-s")
}

// BenchmarkLiveRealtime streams N sessions at once, each at real time (a
// 20 ms chunk every 20 ms) through an engine of 4 decoders. Each session
// speaks half of the time: an 8.7 s read-speech clip at a staggered offset
// within a 26 s stream of which the rest is silence, so about N/2
// sessions speak at any moment. It reports the latency from the end of an
// utterance's audio (its speech_end time, or the cut point) to its final
// transcript, p50 and p95 over all finals, how far Write fell behind real
// time at worst, and the utterances that got no decoder (ErrAtCapacity).
// Each run takes about 27 s of wall time.
//
//	go test -run '^$' -bench BenchmarkLiveRealtime -benchtime 1x ./recognizer
func BenchmarkLiveRealtime(b *testing.B) {
	_, pcm := liveClip(b, "ls-test-clean-1995-1837-0001.wav")
	clip := len(pcm[0])
	for _, n := range []int{1, 6} {
		b.Run(fmt.Sprintf("sessions=%d", n), func(b *testing.B) {
			e := liveEngine(b, 4)
			var lat []float64
			var lag time.Duration
			var capacity int
			for b.Loop() {
				var mu sync.Mutex
				var wg sync.WaitGroup
				for i := range n {
					lead := i * 2 * clip / n
					audio := cat(make([]int16, lead), pcm[0], make([]int16, 2*clip-lead))
					wg.Go(func() {
						l, worst, errs := realtimeSession(b, e, audio)
						mu.Lock()
						defer mu.Unlock()
						lat = append(lat, l...)
						lag = max(lag, worst)
						capacity += errs
					})
				}
				wg.Wait()
			}
			slices.Sort(lat)
			if len(lat) == 0 {
				b.Fatal("no finals")
			}
			b.ReportMetric(lat[len(lat)/2]*1000, "p50-ms")
			b.ReportMetric(lat[len(lat)*95/100]*1000, "p95-ms")
			b.ReportMetric(float64(lag.Milliseconds()), "max-lag-ms")
			b.ReportMetric(float64(len(lat))/float64(b.N), "finals/op")
			b.ReportMetric(float64(capacity)/float64(b.N), "no-decoder/op")
		})
	}
}

// realtimeSession streams audio at real time and returns each final's
// latency in seconds, the worst lag of Write behind real time and the
// number of error events.
func realtimeSession(b *testing.B, e recognizer.Engine, audio []int16) ([]float64, time.Duration, int) {
	var lat []float64
	errs := 0
	var start time.Time
	lastEnd := -1.0 // speech_end time not yet followed by its final
	l, err := recognizer.NewLive(e, recognizer.LiveConfig{Endpointing: params.DefaultEndpointing(), Partials: true}, func(ev recognizer.Event) {
		switch ev.Kind {
		case recognizer.EventSpeechEnd:
			lastEnd = ev.Time
		case recognizer.EventFinal:
			end := ev.Time // a cut: the audio ended where it was cut
			if lastEnd >= 0 {
				end = lastEnd
			}
			lat = append(lat, time.Since(start.Add(time.Duration(end*float64(time.Second)))).Seconds())
		case recognizer.EventSpeechStart:
			lastEnd = -1
		case recognizer.EventError:
			errs++
		}
	})
	if err != nil {
		b.Error(err)
		return nil, 0, 0
	}
	defer l.Close()
	timer := time.NewTimer(0)
	<-timer.C
	start = time.Now()
	var worst time.Duration
	for k := 0; k*liveChunk < len(audio); k++ {
		due := start.Add(time.Duration(k+1) * 20 * time.Millisecond) // the chunk has fully arrived
		if d := time.Until(due); d > 0 {
			timer.Reset(d)
			<-timer.C
		} else {
			worst = max(worst, -d)
		}
		chunk := audio[k*liveChunk : min((k+1)*liveChunk, len(audio))]
		if err := l.Write(b.Context(), [][]int16{chunk}); err != nil {
			b.Error(err)
			return nil, 0, 0
		}
	}
	l.Flush(b.Context())
	return lat, worst, errs
}
