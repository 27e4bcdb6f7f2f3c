package api

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fasthttp/websocket"

	"github.com/earshot-dev/earshot/errcode"
	"github.com/earshot-dev/earshot/ingest"
	"github.com/earshot-dev/earshot/ingest/media"
)

// endingService attaches every token to an endingSession: the Live part
// of the job service, the rest left out.
type endingService struct {
	Service
}

func (endingService) AttachLive(_ context.Context, _, _ string, l ingest.Listener) (ingest.Session, error) {
	return &endingSession{l: l, done: make(chan struct{})}, nil
}

// errSessionEnded is what a session's Write and Stop return once it has
// ended: a 404 kind, as daemon/live's ErrSessionEnded (the door must not
// take it for an unknown session, close 4404).
var errSessionEnded = &errcode.Error{Kind: errcode.ErrNotFound, Msg: "session has ended"}

// endingSession ends on its own while the first frame is on its way in, as
// a session does at shutdown: its last message goes out, Done closes, and
// the frame meets the end (errSessionEnded).
type endingSession struct {
	l    ingest.Listener
	done chan struct{}
	once sync.Once
}

func (e *endingSession) ID() string           { return "s" }
func (e *endingSession) Format() media.Format { return media.Format{} }
func (e *endingSession) Done() <-chan struct{} {
	return e.done
}
func (e *endingSession) Err() error { return nil }
func (e *endingSession) Stop(context.Context) error {
	return errSessionEnded
}
func (e *endingSession) Write(context.Context, []byte) error {
	e.once.Do(func() {
		e.l.Send([]byte(`{"type":"end_session"}`))
		close(e.done)
	})
	return errSessionEnded
}

// TestLiveCloseAtSessionEnd: a frame that meets the session's own end does
// not turn the close into 4404; the client gets end_session and 1000. (It
// failed so in a clean-clone CI run, 2026-11-28, TestShutdownFinishesWork:
// the writer picked the reader's 4404 over the session's end at random.)
func TestLiveCloseAtSessionEnd(t *testing.T) {
	s := &Server{svc: endingService{}, log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	lim := ingest.SocketLimits{MaxFrameBytes: 1 << 16, MaxMessagesPerSecond: 100, IdleTimeout: time.Minute}
	up := websocket.Upgrader{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		s.serveLive(conn, "token", lim, nil)
	}))
	defer srv.Close()
	url := "ws" + strings.TrimPrefix(srv.URL, "http")
	for i := range 30 { // the writer's choice was random: one run in three got 1000
		conn, _, err := websocket.DefaultDialer.Dial(url, nil)
		if err != nil {
			t.Fatal(err)
		}
		conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		if err := conn.WriteMessage(websocket.BinaryMessage, make([]byte, 320)); err != nil {
			t.Fatal(err)
		}
		var msgs []string
		code := 0
		for {
			_, b, err := conn.ReadMessage()
			if err != nil {
				if ce := (*websocket.CloseError)(nil); errors.As(err, &ce) {
					code = ce.Code
				}
				break
			}
			msgs = append(msgs, string(b))
		}
		conn.Close()
		if code != closeNormal || len(msgs) != 1 || !strings.Contains(msgs[0], "end_session") {
			t.Fatalf("connection %d: got %q, close %d; want end_session, close 1000", i, msgs, code)
		}
	}
}
