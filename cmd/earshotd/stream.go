package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/fasthttp/websocket"

	"github.com/earshot-dev/earshot/ingest/media"
	"github.com/earshot-dev/earshot/params"
)

// Bounds of a streamed session.
const (
	// realTimeChunk is the audio of one WebSocket frame at real time;
	// fastChunk with --fast, which keeps a long file's frames a second
	// far below live.max_messages_per_second (500).
	realTimeChunk = 100 * time.Millisecond
	fastChunk     = 200 * time.Millisecond
	// handshakeTimeout bounds the WebSocket's opening handshake.
	handshakeTimeout = 10 * time.Second
	// frameWriteTimeout bounds one frame's write: a daemon that reads
	// nothing for that long is gone.
	frameWriteTimeout = 30 * time.Second
	// endTimeout bounds the wait, after stop_recording, for the session's
	// end: its last finals, post-processing, end_session and the close.
	endTimeout = 5 * time.Minute
	// closeWait bounds the wait for the daemon's close after a failed
	// write, whose code says why.
	closeWait = 5 * time.Second
)

// closeMeanings are the WebSocket's close codes (docs/PROTOCOL.md, "Order
// at stop and close codes").
var closeMeanings = map[int]string{
	websocket.CloseNormalClosure:     "session ended",
	4400:                             "bad message, or frames over live.max_messages_per_second",
	4401:                             "bad or expired token, or the session's key was revoked",
	4404:                             "unknown, deleted or ended session, or another connection took it over",
	4413:                             "frame over live.max_frame_bytes",
	websocket.CloseInternalServerErr: "internal error of the daemon",
}

// cmdStream runs a live session on a daemon: it creates the session (POST
// /v2/live) in the format of FILE (a WAV file's header, or the raw-audio
// flags), streams the audio over the session's WebSocket at real time (or
// as fast as the daemon takes it, --fast), prints the transcripts as they
// come, stops the recording at the end of the audio (or on Ctrl-C) and
// prints the session's record, once its batch pass has ended (at most
// --batch-wait). A refused request, a close code other than 1000 or a
// failed session is an error with the daemon's message.
func cmdStream(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("stream", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cf clientFlags
	cf.register(fs)
	var raw liveFormat // the raw-audio flags; encoding "" when not given
	fs.StringVar(&raw.encoding, "encoding", "", "raw audio (not WAV): `E` is wav/pcm, wav/alaw or wav/ulaw")
	fs.IntVar(&raw.sampleRate, "sample-rate", params.DefaultSampleRate, "raw audio: sample rate in Hz")
	fs.IntVar(&raw.bitDepth, "bit-depth", 0, "raw audio: bits per sample (default 16 for wav/pcm, 8 for G.711)")
	fs.IntVar(&raw.channels, "channels", 1, "raw audio: interleaved channels")
	fast := fs.Bool("fast", false, "send the audio as fast as the daemon takes it, not at real time")
	reqPath := fs.String("request", "", "JSON `file` with the session's options (a /v2/live body without the audio format; - for stdin)")
	batchWait := fs.Duration("batch-wait", 2*time.Minute, "after the session, wait this long for its batch pass (0: print the live record)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return errors.New("stream: exactly one FILE (or - for stdin) is required")
	}
	if *reqPath == "-" && fs.Arg(0) == "-" {
		return errors.New("stream: --request and the audio cannot both be stdin")
	}
	src, err := openAudio(fs.Arg(0), raw)
	if err != nil {
		return fmt.Errorf("stream: %w", err)
	}
	defer src.Close()
	body, err := liveBody(*reqPath, src.format)
	if err != nil {
		return fmt.Errorf("stream: %w", err)
	}
	cl, err := cf.client()
	if err != nil {
		return fmt.Errorf("stream: %w", err)
	}
	var sess struct {
		ID  string `json:"id"`
		URL string `json:"url"`
	}
	if err := cl.postJSON(ctx, "/v2/live", body, &sess); err != nil {
		return fmt.Errorf("stream: %w", err)
	}
	if !cf.json {
		pace := "at real time"
		if *fast {
			pace = "as fast as the daemon takes it"
		}
		fmt.Fprintf(stderr, "stream: session %s: %s, %s (Ctrl-C ends the session)\n", sess.ID, src.format, pace)
	}
	run := &liveRun{src: src, fast: *fast, out: newStreamPrinter(stdout, stderr, cf.json, src.format.channels)}
	interrupted, err := run.run(ctx, sess.URL)
	if err != nil {
		return fmt.Errorf("stream: session %s: %w", sess.ID, err)
	}
	// The session ended (close 1000): its record, once its batch pass
	// ended (at most --batch-wait; Ctrl-C ends the wait), read even after
	// a Ctrl-C.
	path := "/v2/live/" + sess.ID
	rec, err := cl.record(context.WithoutCancel(ctx), path)
	if err != nil {
		return fmt.Errorf("stream: session %s: %w", sess.ID, err)
	}
	ended := func(r jobRecord) bool { return r.Status == "error" || r.PostSessionMetadata.BatchPass != "pending" }
	if !ended(rec) && *batchWait > 0 && !interrupted {
		if !cf.json {
			fmt.Fprintf(stderr, "stream: session ended; waiting for its batch pass (at most %s)\n", *batchWait)
		}
		last, _, err := cl.waitRecord(ctx, path, *batchWait, ended)
		switch {
		case err == nil:
			rec = last
		case ctx.Err() == nil:
			return fmt.Errorf("stream: session %s: %w", sess.ID, err)
		}
	}
	if err := rec.failure(); err != nil {
		return fmt.Errorf("stream: %w", err)
	}
	if !ended(rec) && !cf.json {
		fmt.Fprintf(stderr, "stream: the batch pass is still pending: the record below is the live one, which the pass will replace\n")
	}
	return printRecord(stdout, cf.json, rec, cl.base+path)
}

// liveFormat is the audio format of a live session, as POST /v2/live
// names it.
type liveFormat struct {
	encoding                       string
	sampleRate, bitDepth, channels int
}

func (f liveFormat) String() string {
	ch := "1 channel"
	if f.channels != 1 {
		ch = fmt.Sprintf("%d channels", f.channels)
	}
	return fmt.Sprintf("%s %d Hz %d-bit, %s", f.encoding, f.sampleRate, f.bitDepth, ch)
}

// frameBytes is the size of one sample of every channel; 0 for a format
// that is not one (the daemon refuses it).
func (f liveFormat) frameBytes() int {
	if f.bitDepth < 8 || f.channels < 1 {
		return 0
	}
	return f.bitDepth / 8 * f.channels
}

// audioSource is the audio to stream: its bytes after any WAV header, and
// their format.
type audioSource struct {
	r      io.Reader
	format liveFormat
	file   *os.File // nil for stdin
}

func (s *audioSource) Close() error {
	if s.file == nil {
		return nil
	}
	return s.file.Close()
}

// openAudio opens path (- for stdin): a WAV file (RIFF or RF64) gives its
// format and data, anything else is raw audio in the format of raw, whose
// encoding must then be given (bitDepth 0: 16 for wav/pcm, else 8).
func openAudio(path string, raw liveFormat) (*audioSource, error) {
	src := &audioSource{}
	var in io.Reader = os.Stdin
	name := "stdin"
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		src.file, in, name = f, f, path
	}
	br := bufio.NewReaderSize(in, 64<<10)
	head, err := br.Peek(12)
	if err != nil && !errors.Is(err, io.EOF) {
		src.Close()
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	isWAV := len(head) == 12 && (string(head[:4]) == "RIFF" || string(head[:4]) == "RF64") && string(head[8:]) == "WAVE"
	switch {
	case isWAV && raw.encoding != "":
		src.Close()
		return nil, fmt.Errorf("%s is a WAV file, whose header says its format: --encoding is for raw audio", name)
	case isWAV:
		f, n, err := media.ReadWAVHeader(br)
		if err == nil {
			src.format, err = wavLiveFormat(f)
		}
		if err != nil {
			src.Close()
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		src.r = br
		if n >= 0 {
			src.r = io.LimitReader(br, n)
		}
	case raw.encoding == "":
		src.Close()
		return nil, fmt.Errorf("%s is not a WAV file: for raw audio give --encoding (and --sample-rate, --channels); for other containers use earshotd submit", name)
	default:
		src.r, src.format = br, raw
		if raw.bitDepth == 0 {
			src.format.bitDepth = 8
			if raw.encoding == params.EncodingPCM {
				src.format.bitDepth = 16
			}
		}
	}
	return src, nil
}

// wavLiveFormat is the live format of a WAV file's samples; the live API
// takes integer PCM and G.711, not floating point.
func wavLiveFormat(f media.Format) (liveFormat, error) {
	lf := liveFormat{sampleRate: f.SampleRate, bitDepth: f.BitDepth, channels: f.Channels}
	switch f.Encoding {
	case media.LinearPCM:
		lf.encoding = params.EncodingPCM
	case media.ALaw:
		lf.encoding = params.EncodingALaw
	case media.MuLaw:
		lf.encoding = params.EncodingULaw
	default:
		return liveFormat{}, fmt.Errorf("%d-bit %s samples: a live session takes wav/pcm, wav/alaw or wav/ulaw (ffmpeg -i FILE -c:a pcm_s16le OUT.wav converts)", f.BitDepth, f.Encoding)
	}
	return lf, nil
}

// liveBody is the POST /v2/live body: the options of the --request file,
// the audio's format, and partial transcripts on, acknowledgments off
// (unless the file's messages_config says otherwise).
func liveBody(reqPath string, f liveFormat) (map[string]any, error) {
	req, err := readRequest(reqPath)
	if err != nil {
		return nil, err
	}
	for _, k := range []string{"encoding", "sample_rate", "bit_depth", "channels"} {
		if _, ok := req[k]; ok {
			return nil, fmt.Errorf("--request must not carry %s: the audio's format comes from FILE's WAV header or the raw-audio flags", k)
		}
	}
	body := make(map[string]any, len(req)+5)
	for k, v := range req {
		body[k] = v
	}
	body["encoding"], body["sample_rate"], body["bit_depth"], body["channels"] = f.encoding, f.sampleRate, f.bitDepth, f.channels
	mc := map[string]any{"receive_partial_transcripts": true, "receive_acknowledgments": false}
	if given, ok := req["messages_config"]; ok {
		var m map[string]json.RawMessage
		if json.Unmarshal(given, &m) != nil || m == nil {
			return body, nil // as given: the daemon says what is wrong with it
		}
		for k, v := range m {
			mc[k] = v
		}
	}
	body["messages_config"] = mc
	return body, nil
}

// liveRun is one session's WebSocket: a sender of the audio and a reader
// of the daemon's messages.
type liveRun struct {
	src  *audioSource
	fast bool
	out  *streamPrinter
}

// run connects to the session's WebSocket, streams the audio, sends
// stop_recording at its end (or when ctx ends: interrupted) and reads
// every message until the daemon closes the socket. Any close but 1000
// is an error naming the code.
func (r *liveRun) run(ctx context.Context, wsURL string) (interrupted bool, err error) {
	dialer := websocket.Dialer{HandshakeTimeout: handshakeTimeout, Proxy: http.ProxyFromEnvironment}
	conn, resp, err := dialer.DialContext(ctx, wsURL, nil)
	if resp != nil {
		resp.Body.Close()
	}
	if err != nil {
		if resp != nil {
			return false, fmt.Errorf("open the WebSocket: %s: %w", resp.Status, err)
		}
		return false, fmt.Errorf("open the WebSocket: %w", err)
	}
	defer conn.Close()
	readerDone := make(chan struct{})
	var readErr error
	var wg sync.WaitGroup
	wg.Go(func() {
		defer close(readerDone)
		readErr = r.read(conn)
	})
	interrupted, sendErr := r.send(ctx, conn, readerDone)
	if sendErr != nil {
		// A write fails when the daemon closed the socket: give the
		// reader a moment to read why (its close code says more).
		t := time.NewTimer(closeWait)
		select {
		case <-readerDone:
		case <-t.C:
			conn.Close() // ends the reader
		}
		t.Stop()
	}
	wg.Wait()
	var ce *closeError
	if sendErr != nil && !errors.As(readErr, &ce) {
		return interrupted, sendErr
	}
	return interrupted, readErr
}

// closeError is a close of the WebSocket by the daemon with a code other
// than 1000.
type closeError struct {
	code int
	text string
}

func (e *closeError) Error() string {
	meaning := closeMeanings[e.code]
	if meaning == "" {
		meaning = "unknown code"
	}
	return fmt.Sprintf("the daemon closed the WebSocket with %d (%s): %s", e.code, meaning, e.text)
}

// send streams the audio in frames, paced at real time unless fast, then
// sends stop_recording and gives the reader endTimeout for the end. It
// returns early when the reader ended (the daemon closed the socket).
func (r *liveRun) send(ctx context.Context, conn *websocket.Conn, readerDone <-chan struct{}) (interrupted bool, err error) {
	f := r.src.format
	perSecond := f.frameBytes() * f.sampleRate
	chunkDur := realTimeChunk
	if r.fast {
		chunkDur = fastChunk
	}
	buf := make([]byte, max(1, f.sampleRate*int(chunkDur/time.Millisecond)/1000)*max(1, f.frameBytes()))
	start := time.Now()
	var sent int64
	var srcErr error
	for done := false; !done; {
		n, err := io.ReadFull(r.src.r, buf)
		if n > 0 {
			conn.SetWriteDeadline(time.Now().Add(frameWriteTimeout))
			if err := conn.WriteMessage(websocket.BinaryMessage, buf[:n]); err != nil {
				return false, fmt.Errorf("send audio: %w", err)
			}
			sent += int64(n)
		}
		switch {
		case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
			done = true
			continue
		case err != nil:
			srcErr, done = err, true // stop the session, then say so
			continue
		}
		// At real time, the next frame goes when the audio sent so far
		// has played; --fast only looks at ctx and the reader.
		var wait time.Duration
		if !r.fast && perSecond > 0 {
			wait = time.Until(start.Add(time.Duration(sent * int64(time.Second) / int64(perSecond))))
		}
		t := time.NewTimer(max(wait, 0))
		select {
		case <-ctx.Done():
			// Ctrl-C: stop the recording; the session ends after its
			// last finals. A second Ctrl-C quits at once.
			signal.Reset(os.Interrupt, syscall.SIGTERM)
			interrupted, done = true, true
		case <-readerDone:
			t.Stop()
			return false, nil
		case <-t.C:
		}
		t.Stop()
	}
	conn.SetWriteDeadline(time.Now().Add(frameWriteTimeout))
	if err := conn.WriteJSON(map[string]string{"type": "stop_recording"}); err != nil {
		return interrupted, fmt.Errorf("send stop_recording: %w", err)
	}
	conn.SetReadDeadline(time.Now().Add(endTimeout))
	if srcErr != nil {
		<-readerDone
		return interrupted, fmt.Errorf("read the audio: %w (the session was stopped)", srcErr)
	}
	return interrupted, nil
}

// read hands every message to the printer until the daemon closes the
// socket: nil for 1000, else an error with the close code and reason.
func (r *liveRun) read(conn *websocket.Conn) error {
	for {
		mt, b, err := conn.ReadMessage()
		if err != nil {
			r.out.endLine()
			var ce *websocket.CloseError
			if errors.As(err, &ce) {
				if ce.Code == websocket.CloseNormalClosure {
					return nil
				}
				return &closeError{code: ce.Code, text: ce.Text}
			}
			return fmt.Errorf("the WebSocket ended without a close from the daemon: %w", err)
		}
		if mt != websocket.TextMessage {
			continue
		}
		if err := r.out.message(b); err != nil {
			return err
		}
	}
}
