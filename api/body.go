package api

import (
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/earshot-dev/earshot/errcode"
)

// bodyRateGrace is how long a request body is exempt from
// Config.MinBodyBytesPerSecond: its first bytes may come as slowly as the
// connection starts up.
const bodyRateGrace = 10 * time.Second

// clientBody reads a request body, holds it to a minimum average rate,
// and remembers how it failed, so that a body cut short by its client (a
// connection closed before its Content-Length, a body that stalls) is
// answered as the client's fault rather than as the service's.
//
// The rate: before each read the connection's read deadline is set to the
// moment the body's average since its start would fall below minRate if
// nothing more came (never before bodyRateGrace, never after the request's
// own read timeout). A client that keeps its average gets the whole read
// timeout; one that trickles is cut soon after the grace, so a tenant with
// a key cannot hold connections by uploading a byte at a time.
type clientBody struct {
	r       io.Reader
	conn    net.Conn  // whose deadline is moved; nil: no rate bound
	start   time.Time // when the body was first wanted
	end     time.Time // the request's own read timeout
	minRate float64   // bytes a second
	n       int64     // bytes read
	err     error     // the first read error other than io.EOF
}

// newClientBody is the request's body under this server's rate bound.
func (s *Server) newClientBody(ctx *fasthttp.RequestCtx) *clientBody {
	b := &clientBody{r: ctx.RequestBodyStream(), start: time.Now()}
	if s.cfg.MinBodyBytesPerSecond > 0 && ctx.Conn() != nil {
		b.conn, b.minRate = ctx.Conn(), float64(s.cfg.MinBodyBytesPerSecond)
		b.end = b.start.Add(s.bodyTimeout(&ctx.Request.Header))
	}
	return b
}

func (b *clientBody) Read(p []byte) (int, error) {
	if b.r == nil {
		return 0, io.EOF
	}
	if b.conn != nil {
		due := b.start.Add(max(bodyRateGrace, time.Duration(float64(b.n)/b.minRate*float64(time.Second))))
		if due.After(b.end) {
			due = b.end
		}
		b.conn.SetReadDeadline(due)
	}
	n, err := b.r.Read(p)
	b.n += int64(n)
	if err != nil && err != io.EOF && b.err == nil {
		b.err = err
	}
	return n, err
}

// blame turns err, the failure of what read this body, into the client's
// error when the body itself failed: 408 if it stalled (below the minimum
// rate or past its read timeout), 400 if it ended early (multipart reports
// a body that ends inside a part as io.ErrUnexpectedEOF).
func (b *clientBody) blame(err error) error {
	var ne net.Error
	switch {
	case b.err != nil && errors.As(b.err, &ne) && ne.Timeout():
		return fmt.Errorf("body after %d bytes in %s: %w: %w", b.n, time.Since(b.start).Round(time.Millisecond), errcode.ErrBodyTimeout, b.err)
	case b.err != nil, errors.Is(err, io.ErrUnexpectedEOF):
		return errBadRequest("body: ended before its Content-Length (truncated upload)")
	}
	return err
}
