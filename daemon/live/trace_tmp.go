package live

import (
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/earshot-dev/earshot/recognizer"
)

// TEMPORARY latency instrumentation of live finals (issue 41).

var traceOn = os.Getenv("ESTRACE_FINALS") != ""

type traceArr struct {
	pos int64
	at  time.Time
}

type traceState struct {
	queued int64
	arr    []traceArr
}

var traceMu sync.Mutex
var traces = map[*session]*traceState{}

func (s *session) traceQueued(n int) {
	if !traceOn {
		return
	}
	traceMu.Lock()
	defer traceMu.Unlock()
	t := traces[s]
	if t == nil {
		t = &traceState{}
		traces[s] = t
	}
	t.queued += int64(n)
	t.arr = append(t.arr, traceArr{t.queued, time.Now()})
	if len(t.arr) > 4000 {
		t.arr = t.arr[len(t.arr)-2000:]
	}
}

func (s *session) traceFinal(ev recognizer.Event) {
	if !traceOn {
		return
	}
	now := time.Now()
	traceMu.Lock()
	t := traces[s]
	var arr time.Time
	if t != nil {
		pos := int64(ev.Time * recognizer.SampleRate)
		for _, a := range t.arr {
			if a.pos >= pos {
				arr = a.at
				break
			}
		}
	}
	traceMu.Unlock()
	tr := ev.Trace
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	sec := func(n int64) float64 { return float64(n) / recognizer.SampleRate }
	fmt.Fprintf(os.Stdout, "FINALTRACE job=%s ch=%d end=%.3f emitpos=%.3f due=%.3f close=%.3f vadend=%.3f finish=%v arrwall=%d writewall=%d emitwall=%d sesswall=%d readms=%.1f waitms=%.1f runms=%.1f\n",
		s.id, ev.Channel, ev.Utterance.End, ev.Time, sec(tr.Due), sec(tr.Close), sec(tr.VADEnd), tr.Finish,
		arr.UnixMicro(), tr.WriteWall.UnixMicro(), tr.EmitWall.UnixMicro(), now.UnixMicro(), ms(tr.Read), ms(tr.Wait), ms(tr.Run))
}
