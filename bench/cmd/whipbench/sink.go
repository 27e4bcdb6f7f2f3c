package main

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/zaf/g711"

	"github.com/earshot-dev/earshot/ingest"
	"github.com/earshot-dev/earshot/ingest/media"
	"github.com/earshot-dev/earshot/ingest/webrtc"
)

// ---- the counting sink: the door's consumer side ----

// sink is an ingest.Session that decodes µ-law and counts bytes.
type sink struct {
	id    string
	done  chan struct{}
	once  sync.Once
	mu    sync.Mutex
	pcm   []int16
	bytes *atomic.Int64
}

func (s *sink) ID() string            { return s.id }
func (s *sink) Done() <-chan struct{} { return s.done }
func (s *sink) Err() error            { return nil }
func (s *sink) Format() media.Format {
	return media.Format{Encoding: media.MuLaw, BitDepth: 8, SampleRate: 8000, Channels: 1}
}

func (s *sink) Write(_ context.Context, b []byte) error {
	s.mu.Lock()
	s.pcm = s.pcm[:0]
	for _, c := range b {
		s.pcm = append(s.pcm, g711.DecodeUlawFrame(c))
	}
	s.mu.Unlock()
	s.bytes.Add(int64(len(b)))
	return nil
}

func (s *sink) Stop(context.Context) error {
	s.once.Do(func() { close(s.done) })
	return nil
}

// attacher hands out sinks for tokens "<id>.x".
type attacher struct {
	bytes atomic.Int64
	mu    sync.Mutex
	all   []*sink
}

func (a *attacher) AttachAudio(_ context.Context, token, _ string) (ingest.Session, error) {
	id, _, _ := strings.Cut(token, ".")
	s := &sink{id: id, done: make(chan struct{}), bytes: &a.bytes}
	a.mu.Lock()
	a.all = append(a.all, s)
	a.mu.Unlock()
	return s, nil
}

// CheckSessionToken takes every token.
func (a *attacher) CheckSessionToken(string) error { return nil }

func newDoor() (*webrtc.Door, *attacher, error) {
	cfg := webrtc.Config{IncludeLoopback: true, UDPPorts: udpPorts}
	cfg.SetDefaults()
	att := &attacher{}
	d, err := webrtc.New(cfg, att, nil)
	return d, att, err
}
