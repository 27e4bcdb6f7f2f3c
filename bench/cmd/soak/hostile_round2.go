package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// soakSIPConfig turns the SIP door on (port %d, TCP and UDP) for the TCP
// storms; only 127.0.0.1 may place calls.
const soakSIPConfig = `
sip:
  listen: 127.0.0.1:%d
  allow: [127.0.0.1/32]
  routes:
    - user: transcribe
      account: hostile
`

// roundTwoMix says what roundTwo does, for the report.
const roundTwoMix = "a job with custom_metadata 1e309 and a live session with -1e400 every 10 s, each followed by the account's lists; " +
	"a SIP TCP storm every 30 s (100 addresses outside sip.allow at 8 connections each and 100 idle connections of the allowed address, held 10 s); " +
	"an 8-channel 4 h 1 kHz 8-bit WAV (115 MB) uploaded every 60 s; an audio_url answering a 9.5 MB Content-Disposition filename every 10 s; " +
	"an 8-channel 16 kHz live session at 4x every 20 s by account wide"

// roundTwo is the bad-day mix of issue 43 (round two of the hostile
// probe), run by the hostile account beside the normal traffic.
type roundTwo struct {
	h       *hostile
	wide    *client // account wide: the 8-channel live sessions
	pcm8    []byte  // the clip on 8 channels
	bigWAV  []byte  // 8 channels, 4 h, 1 kHz, 8-bit silence
	sipAddr string
	nameURL string // an audio_url whose answer names a 9.5 MB file
	stop    func()
}

func newRoundTwo(h *hostile, wide *client, pcm []byte, sipAddr string) (*roundTwo, error) {
	r := &roundTwo{h: h, wide: wide, sipAddr: sipAddr}
	for i := 0; i+1 < len(pcm); i += 2 {
		for range 8 {
			r.pcm8 = append(r.pcm8, pcm[i], pcm[i+1])
		}
	}
	r.bigWAV = wavHeader(8, 1000, 8, 8*1000*(4*3600-60))
	r.bigWAV = append(r.bigWAV, bytes.Repeat([]byte{0x80}, 8*1000*(4*3600-60))...)
	url, stop, err := namingServer(h.wav, strings.Repeat("n", 9500<<10)+".wav")
	if err != nil {
		return nil, err
	}
	r.nameURL, r.stop = url, stop
	return r, nil
}

func (r *roundTwo) close() { r.stop() }

// wavHeader is a PCM WAV header for n data bytes.
func wavHeader(channels, rate, bits, n int) []byte {
	var b bytes.Buffer
	w := func(v any) { binary.Write(&b, binary.LittleEndian, v) }
	b.WriteString("RIFF")
	w(uint32(36 + n))
	b.WriteString("WAVEfmt ")
	w(uint32(16))
	w(uint16(1))
	w(uint16(channels))
	w(uint32(rate))
	w(uint32(rate * channels * bits / 8))
	w(uint16(channels * bits / 8))
	w(uint16(bits))
	b.WriteString("data")
	w(uint32(n))
	return b.Bytes()
}

// namingServer serves wav with a Content-Disposition naming name.
func namingServer(wav []byte, name string) (url string, stop func(), err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "audio/wav")
		w.Header().Set("Content-Disposition", `attachment; filename="`+name+`"`)
		w.Write(wav)
	})}
	go srv.Serve(ln)
	return "http://" + ln.Addr().String() + "/named.wav", func() { srv.Close() }, nil
}

// freePort is a loopback port free for TCP and UDP at the time of asking.
func freePort() (int, error) {
	for range 20 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, err
		}
		port := ln.Addr().(*net.TCPAddr).Port
		ln.Close()
		if pc, err := net.ListenPacket("udp", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
			pc.Close()
			return port, nil
		}
	}
	return 0, fmt.Errorf("no free port for the SIP door")
}

// run starts the round-two actors until ctx ends.
func (r *roundTwo) run(ctx context.Context, wg *sync.WaitGroup) {
	h := r.h
	every := func(d time.Duration, f func()) { repeat(ctx, wg, d, f) }
	var up struct {
		AudioURL string `json:"audio_url"`
	}
	if st, b := h.upload("round2.wav"); st == 200 {
		json.Unmarshal(b, &up)
	}
	every(10*time.Second, func() {
		if up.AudioURL != "" {
			h.status("job with custom_metadata 1e309", "POST", "/v2/pre-recorded",
				[]byte(`{"audio_url":"`+up.AudioURL+`","custom_metadata":{"x":1e309}}`), "application/json")
		}
		h.status("list after it", "GET", "/v2/pre-recorded?limit=5", nil, "")
		h.status("live session with custom_metadata -1e400", "POST", "/v2/live", []byte(`{"custom_metadata":{"x":-1e400}}`), "application/json")
		h.status("live list after it", "GET", "/v2/live?limit=5", nil, "")
	})
	every(10*time.Second, func() {
		body, _ := json.Marshal(map[string]any{"audio_url": r.nameURL})
		h.status("audio_url with a 9.5 MB filename", "POST", "/v2/pre-recorded", body, "application/json")
	})
	every(60*time.Second, func() {
		h.uploadAs("upload 8-channel 4 h WAV", "eight.wav", r.bigWAV)
	})
	every(20*time.Second, func() {
		r.wide.liveWith([]byte(`{"encoding":"wav/pcm","sample_rate":16000,"bit_depth":16,"channels":8}`), r.pcm8)
	})
	every(30*time.Second, func() { r.storm(ctx) })
}

// storm holds SIP TCP connections from 100 refused addresses (8 each) and
// 100 idle ones of the allowed address for 10 s, and notes how many the
// daemon had closed by then.
func (r *roundTwo) storm(ctx context.Context) {
	type held struct {
		c    net.Conn
		kind string
	}
	var mu sync.Mutex
	var conns []held
	var wg sync.WaitGroup
	dial := func(src net.IP) {
		kind := "sip tcp storm, refused source"
		if src.IsLoopback() && src.Equal(net.IPv4(127, 0, 0, 1)) {
			kind = "sip tcp storm, allowed source idle"
		}
		c, err := (&net.Dialer{LocalAddr: &net.TCPAddr{IP: src}, Timeout: 5 * time.Second}).DialContext(ctx, "tcp", r.sipAddr)
		if err != nil {
			r.h.note(kind, "dial refused")
			return
		}
		mu.Lock()
		conns = append(conns, held{c, kind})
		mu.Unlock()
	}
	wg.Go(func() {
		for i := range 100 {
			for range 8 {
				dial(net.IPv4(127, 2, byte(i/250), byte(i%250+1)))
			}
		}
	})
	wg.Go(func() {
		for range 100 {
			dial(net.IPv4(127, 0, 0, 1))
		}
	})
	wg.Wait()
	select {
	case <-ctx.Done():
	case <-time.After(10 * time.Second):
	}
	buf := make([]byte, 512)
	for _, hc := range conns {
		hc.c.SetReadDeadline(time.Now().Add(time.Millisecond))
		_, err := hc.c.Read(buf)
		for err == nil {
			_, err = hc.c.Read(buf)
		}
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			r.h.note(hc.kind, "still open after 10 s")
		} else {
			r.h.note(hc.kind, "closed by the daemon")
		}
		hc.c.Close()
	}
}
