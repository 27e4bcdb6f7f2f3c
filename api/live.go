package api

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/fasthttp/websocket"
	"github.com/valyala/fasthttp"

	"github.com/earshot-dev/earshot/errcode"
	"github.com/earshot-dev/earshot/ingest"
	"github.com/earshot-dev/earshot/store"
)

// Live is what the API needs of the job service for live sessions: the
// WebSocket attaches through the door contract (ingest.Session) as the SIP
// and WHIP doors do, with itself as the listener of the session's
// messages; the attachment lasts while ctx does.
type Live interface {
	CreateLive(ctx context.Context, account, keyID, requestID string, body []byte, region string) (ingest.LiveCreated, error)
	AttachLive(ctx context.Context, token, from string, l ingest.Listener) (ingest.Session, error)
	PauseLive(ctx context.Context, account, id string, pause bool) (ingest.PauseState, error)
}

// pauser is a session attachment the WebSocket's pause_recording and
// resume_recording reach (daemon/live's attachment).
type pauser interface {
	Pause(ctx context.Context) error
	Resume(ctx context.Context) error
}

// errBadMessage is the kind of a client message that is not one of the
// protocol's (close 4400).
var errBadMessage = errors.New("api: bad message")

// WebSocket close codes (PROTOCOL.md).
const (
	closeNormal     = 1000
	closeInternal   = 1011
	closeBadToken   = 4401
	closeNoSession  = 4404
	closeTooLarge   = 4413
	closeBadMessage = 4400
)

// closeCode maps a job-service error to the WebSocket close code: the one
// mapping for this door.
func closeCode(err error) int {
	switch errcode.Status(err) {
	case 401:
		return closeBadToken
	case 404:
		return closeNoSession
	case 413:
		return closeTooLarge
	case 400:
		return closeBadMessage
	}
	if errors.Is(err, errBadMessage) {
		return closeBadMessage
	}
	return closeInternal
}

// closeText is the close reason for err: the client-facing message of
// errcode.Message, except for a bad message, which has no HTTP status (so
// Message would say "internal error") and whose own text says what was
// wrong.
func closeText(err error) string {
	var e *errcode.Error
	if errors.Is(err, errBadMessage) && errors.As(err, &e) {
		return e.Msg
	}
	return errcode.Message(err)
}

func (s *Server) createLive(ctx *fasthttp.RequestCtx) {
	body, err := s.readJSON(ctx)
	if err != nil {
		s.fail(ctx, err)
		return
	}
	nl, err := s.svc.CreateLive(ctx, account(ctx), keyID(ctx), requestID(ctx), body, string(ctx.QueryArgs().Peek("region")))
	if err != nil {
		s.fail(ctx, err)
		return
	}
	// The session runs on this node, or on the node of a cluster whose
	// base URL the daemon names.
	setAuditObject(ctx, nl.ID)
	base := nl.NodeURL
	if base == "" {
		base = s.baseURL(ctx)
	}
	base = strings.TrimSuffix(base, "/")
	ws := "ws" + strings.TrimPrefix(base, "http")
	s.writeJSON(ctx, fasthttp.StatusCreated, struct {
		ID        string `json:"id"`
		CreatedAt string `json:"created_at"`
		URL       string `json:"url"`
		WHIPURL   string `json:"whip_url"`
	}{nl.ID, formatTime(nl.CreatedAt), ws + "/v2/live?token=" + nl.Token, base + "/v2/live/" + nl.ID + "/whip"})
}

// liveRoot is GET /v2/live: the WebSocket when a token and an upgrade come,
// else the list of live jobs.
func (s *Server) liveRoot(ctx *fasthttp.RequestCtx) {
	if tok := ctx.QueryArgs().Peek("token"); tok != nil && websocket.FastHTTPIsWebSocketUpgrade(ctx) {
		s.liveSocket(ctx, string(tok))
		return
	}
	s.auth(s.audited(store.AuditLiveList, s.list(store.KindLive)))(ctx)
}

type wsClose struct {
	code int
	text string
}

func (s *Server) liveSocket(ctx *fasthttp.RequestCtx, token string) {
	up := websocket.FastHTTPUpgrader{
		ReadBufferSize:  32 << 10,
		WriteBufferSize: 32 << 10,
		// The session token authenticates; pages from any origin may connect.
		CheckOrigin: func(*fasthttp.RequestCtx) bool { return true },
	}
	lim := s.cfg.Live
	// The hijacked connection hides the guarded one: take it now, and
	// hold it (never closed to admit another) while the token is checked.
	gc := guardedOf(ctx.Conn())
	if gc != nil {
		gc.hold()
	}
	err := up.Upgrade(ctx, func(conn *websocket.Conn) {
		defer conn.Close()
		s.serveLive(conn, token, lim, gc)
	})
	if err != nil {
		s.log.Debug("websocket upgrade failed", "error", err)
	}
}

// serveLive runs one WebSocket connection: this goroutine reads, a writer
// goroutine it waits for sends; the session ends the socket with 1000 after
// end_session. gc, when not nil, is the connection's place in its guard,
// trusted once the token is.
func (s *Server) serveLive(conn *websocket.Conn, token string, lim ingest.SocketLimits, gc *guardedConn) {
	log := s.log.With("remote_addr", conn.RemoteAddr().String())
	l := &wsListener{out: make(chan []byte, 4096), kicked: make(chan struct{})}
	out, kicked := l.out, l.kicked
	closeReq := make(chan wsClose, 1)
	readerDone := make(chan struct{})
	// The attachment's lifetime: cancelled when the reader leaves, which
	// detaches the session (it waits live.reconnect_grace for another).
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	att, err := s.svc.AttachLive(ctx, token, conn.RemoteAddr().String(), l)
	if err != nil {
		writeClose(conn, closeCode(err), closeText(err))
		return
	}
	// A valid token authenticates the connection as a key does.
	if gc != nil {
		gc.trust()
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		send := func(b []byte) bool {
			conn.SetWriteDeadline(time.Now().Add(10 * time.Second))
			return conn.WriteMessage(websocket.TextMessage, b) == nil
		}
		// ended closes a session that has ended: its last messages, then
		// 1000, or the code of why it was ended from outside.
		ended := func() {
			for {
				select {
				case b := <-out:
					send(b)
					continue
				default:
				}
				break
			}
			if err := att.Err(); err != nil {
				writeClose(conn, closeCode(err), errcode.Message(err)) // ended from outside: its key was revoked
			} else {
				writeClose(conn, closeNormal, "session ended")
			}
			conn.Close()
		}
		// hasEnded: a reader whose frame met the session's end (404
		// "session has ended") leaves as the session ends; the client
		// hears the end, not the frame's error.
		hasEnded := func() bool {
			select {
			case <-att.Done():
				ended()
				return true
			default:
				return false
			}
		}
		for {
			select {
			case b := <-out:
				if !send(b) {
					conn.Close()
					return
				}
			case <-att.Done():
				ended()
				return
			case <-kicked:
				writeClose(conn, closeNoSession, "another connection took over this session")
				conn.Close()
				return
			case c := <-closeReq:
				// The reader has left: it asks for a close code only as it returns.
				if !hasEnded() {
					writeClose(conn, c.code, c.text)
					lingerClose(conn)
				}
				return
			case <-readerDone:
				if hasEnded() {
					return
				}
				// The reader may have asked for a close code as it left.
				select {
				case c := <-closeReq:
					writeClose(conn, c.code, c.text)
					lingerClose(conn)
				default:
				}
				return
			}
		}
	})
	defer wg.Wait()
	defer close(readerDone)
	defer cancel() // detach

	closeWith := func(code int, text string) {
		select {
		case closeReq <- wsClose{code, text}:
		default:
		}
	}
	bucket := newMessageBucket(lim.MaxMessagesPerSecond, time.Now())
	stopped := false // a stop_recording was taken: the session's end closes the socket
	for {
		if stopped {
			// Finishing (post-processing) may outlast the idle timeout; the
			// session's end closes the socket, which ends this read.
			conn.SetReadDeadline(time.Time{})
		} else {
			conn.SetReadDeadline(time.Now().Add(lim.IdleTimeout + 5*time.Second))
		}
		mt, data, err := readFrame(conn, int64(lim.MaxFrameBytes)*4/3+4096)
		if err != nil {
			if errors.Is(err, websocket.ErrReadLimit) {
				closeWith(closeTooLarge, "frame over the size limit")
			}
			return
		}
		read := time.Now()
		if !bucket.take(read) {
			closeWith(closeBadMessage, "message rate over the limit")
			return
		}
		switch mt {
		case websocket.BinaryMessage:
			err = att.Write(ctx, data)
		case websocket.TextMessage:
			var stop bool
			stop, err = s.liveText(ctx, att, data)
			stopped = stopped || stop && err == nil
		}
		bucket.busy(time.Since(read))
		if err != nil {
			code := closeCode(err)
			if code == closeInternal {
				log.Error("live session failed", "error", err)
			}
			closeWith(code, closeText(err))
			return
		}
	}
}

// readFrame reads one message of at most limit bytes (a text frame carries
// base64 audio, so the caller allows for its growth). A longer message fails
// with websocket.ErrReadLimit after limit+1 bytes, without the library's own
// close 1009, so the caller can close with 4413 as PROTOCOL.md says.
func readFrame(conn *websocket.Conn, limit int64) (int, []byte, error) {
	mt, r, err := conn.NextReader()
	if err != nil {
		return 0, nil, err
	}
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return 0, nil, err
	}
	if int64(len(data)) > limit {
		return 0, nil, websocket.ErrReadLimit
	}
	return mt, data, nil
}

// clientMessage is a text frame from the client (PROTOCOL.md).
type clientMessage struct {
	Type string `json:"type"`
	Data *struct {
		Chunk string `json:"chunk"`
	} `json:"data"`
}

// liveText passes a client's text frame to the session; stop reports a
// stop_recording. The session takes a stop without holding the reader
// (ingest.Session.Stop, for a door with a listener), so a later
// stop_recording is read and acknowledged too; the session finishes even
// if the client goes away meanwhile, so the stop does not end with the
// attachment's ctx.
func (s *Server) liveText(ctx context.Context, att ingest.Session, data []byte) (stop bool, err error) {
	typ, audio, err := decodeClientMessage(data)
	if err != nil {
		return false, err
	}
	switch typ {
	case "stop_recording":
		return true, att.Stop(context.WithoutCancel(ctx))
	case "pause_recording", "resume_recording":
		p, ok := att.(pauser)
		if !ok {
			return false, badMessage(typ + " is not supported on this session")
		}
		if typ == "pause_recording" {
			return false, p.Pause(ctx)
		}
		return false, p.Resume(ctx)
	}
	return false, att.Write(ctx, audio)
}

// pauseLive is POST /v2/live/{id}/pause (pause true) and /resume: the
// session's pause state, 200 however often it is asked.
func (s *Server) pauseLive(pause bool) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		st, err := s.svc.PauseLive(ctx, account(ctx), pathID(ctx), pause)
		if err != nil {
			s.fail(ctx, err)
			return
		}
		if st.Spans == nil {
			st.Spans = []ingest.PausedSpan{}
		}
		s.writeJSON(ctx, fasthttp.StatusOK, st)
	}
}

// decodeClientMessage parses a client text frame: its type (audio_chunk,
// stop_recording, pause_recording or resume_recording) and, for
// audio_chunk, the decoded audio. Any other shape is a bad message.
func decodeClientMessage(data []byte) (string, []byte, error) {
	var m clientMessage
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return "", nil, badMessage("message is not valid JSON of a known shape: " + err.Error())
	}
	switch m.Type {
	case "audio_chunk":
		if m.Data == nil {
			return "", nil, badMessage("audio_chunk needs data.chunk")
		}
		audio, err := base64.StdEncoding.DecodeString(m.Data.Chunk)
		if err != nil {
			return "", nil, badMessage("data.chunk is not base64")
		}
		return m.Type, audio, nil
	case "stop_recording", "pause_recording", "resume_recording":
		return m.Type, nil, nil
	}
	return "", nil, badMessage("type must be audio_chunk, stop_recording, pause_recording or resume_recording")
}

func badMessage(text string) error {
	return &errcode.Error{Kind: errBadMessage, Msg: text}
}

// wsListener takes a session's messages for the connection's writer:
// Send never blocks (a full queue drops the message), Kick closes kicked
// once.
type wsListener struct {
	out      chan []byte
	kicked   chan struct{}
	kickOnce sync.Once
}

func (l *wsListener) Send(b []byte) bool {
	select {
	case l.out <- b:
		return true
	default:
		return false
	}
}

func (l *wsListener) Kick() { l.kickOnce.Do(func() { close(l.kicked) }) }

// lingerClose closes conn after reading (and dropping) what the client still
// sends for up to a second, until its close frame: closing a socket with
// unread data makes the kernel reset it, and a flooding client would then
// lose our close frame (1006 instead of the close code).
func lingerClose(conn *websocket.Conn) {
	conn.SetReadDeadline(time.Now().Add(time.Second))
	for {
		if _, _, err := conn.NextReader(); err != nil {
			break
		}
	}
	conn.Close()
}

func writeClose(conn *websocket.Conn, code int, text string) {
	// A close reason is UTF-8 of at most 123 bytes (RFC 6455 5.5, 5.5.1);
	// text may quote what the client sent.
	text = strings.ToValidUTF8(text, "?")
	if len(text) > 120 {
		n := 120
		for n > 0 && !utf8.RuneStart(text[n]) {
			n--
		}
		text = text[:n]
	}
	conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, text), time.Now().Add(time.Second))
}
