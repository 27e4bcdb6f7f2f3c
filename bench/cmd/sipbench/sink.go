package main

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/zaf/g711"

	"github.com/earshot-dev/earshot/ingest"
	"github.com/earshot-dev/earshot/ingest/media"
)

// ---------------------------------------------------------------- door side

// sink is the benchmark's engine: it counts what the door writes and, when
// decode is set, decodes the G.711 to 16-bit PCM as the live pipeline does.
type sink struct {
	decode   atomic.Bool
	bytes    atomic.Int64
	voiced   atomic.Int64 // bytes in 160-byte steps that are not all silence
	samples  atomic.Int64
	sessions atomic.Int64
}

func (k *sink) OpenLive(_ context.Context, req ingest.LiveRequest) (ingest.Session, error) {
	n := k.sessions.Add(1)
	return &session{k: k, id: fmt.Sprintf("bench-%d", n), format: req.Format, alaw: req.Format.Encoding == media.ALaw, done: make(chan struct{})}, nil
}

type session struct {
	k      *sink
	id     string
	format media.Format
	alaw   bool
	once   sync.Once
	done   chan struct{}
}

func (s *session) ID() string           { return s.id }
func (s *session) Format() media.Format { return s.format }
func (s *session) Err() error           { return nil }

func (s *session) Write(_ context.Context, audio []byte) error {
	s.k.bytes.Add(int64(len(audio)))
	silence := byte(0xFF)
	if s.alaw {
		silence = 0xD5
	}
	voiced := 0
	for i := 0; i < len(audio); i += 160 {
		frame := audio[i:min(i+160, len(audio))]
		for _, b := range frame {
			if b != silence {
				voiced += len(frame)
				break
			}
		}
	}
	s.k.voiced.Add(int64(voiced))
	if s.k.decode.Load() {
		var pcm []byte
		if s.alaw {
			pcm = g711.DecodeAlaw(audio)
		} else {
			pcm = g711.DecodeUlaw(audio)
		}
		s.k.samples.Add(int64(len(pcm) / 2))
	}
	return nil
}

func (s *session) Stop(context.Context) error {
	s.once.Do(func() { close(s.done) })
	return nil
}

func (s *session) Done() <-chan struct{} { return s.done }
