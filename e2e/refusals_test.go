package e2e

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/fasthttp/websocket"
)

// closeOf reads c until the server closes it and returns the close code
// and reason (code 0: the connection ended without a close frame).
func closeOf(t *testing.T, c *websocket.Conn, timeout time.Duration) (int, string) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(timeout))
	for {
		if _, _, err := c.ReadMessage(); err != nil {
			var ce *websocket.CloseError
			if errors.As(err, &ce) {
				return ce.Code, ce.Text
			}
			t.Logf("read: %v", err)
			return 0, ""
		}
	}
}

// TestRefusalsSayWhy is finding 11 of issue 13: a truncated upload is the
// client's fault (400, not 500); a WebSocket closed with 4400 gives the
// real reason; and the message-rate limit is a token bucket with a burst,
// so a client within its rate whose frames arrive bunched is not cut.
func TestRefusalsSayWhy(t *testing.T) {
	d := startDaemon(t, "", "live:\n  max_messages_per_second: 50\n")
	key := createKey(t, d.DataDir, "acme")
	wav, _ := clip(t, "pocketsphinx-goforward.wav")
	audio := pcmOf(t, wav)

	t.Run("truncated upload is 400", func(t *testing.T) {
		body, ctype := multipartAudio(t, wav)
		c, err := net.Dial("tcp", strings.TrimPrefix(d.Base, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(30 * time.Second))
		// Content-Length says the whole body; half of it comes, then EOF.
		fmt.Fprintf(c, "POST /v2/upload HTTP/1.1\r\nHost: earshot\r\nx-service-key: %s\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n",
			key, ctype, len(body))
		c.Write(body[:len(body)/2])
		c.(*net.TCPConn).CloseWrite()
		status, err := bufio.NewReader(c).ReadString('\n')
		if err != nil {
			t.Fatalf("no answer to a truncated upload: %v", err)
		}
		if !strings.HasPrefix(status, "HTTP/1.1 400") {
			t.Errorf("truncated upload: %q, want 400", status)
		}
	})

	t.Run("4400 gives its reason", func(t *testing.T) {
		s := d.createLive(key, map[string]any{})
		c, err := dial(t, s.URL)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.WriteMessage(websocket.TextMessage, []byte(`{"type":"dance"}`))
		code, reason := closeOf(t, c, 30*time.Second)
		if code != 4400 || reason == "" || strings.Contains(reason, "internal error") || !strings.Contains(reason, "type") {
			t.Errorf("close %d %q, want 4400 naming the type", code, reason)
		}
	})

	t.Run("bunched frames within the rate", func(t *testing.T) {
		// 37.5 frames a second, under the limit of 50, sent as bunches
		// of 30 every 0.8 s, as frames queued on a congested path
		// arrive: within a token bucket of one second's burst, over a
		// fixed 1 s window (60 frames in the first).
		const bunch, every = 30, 800 * time.Millisecond
		s := d.createLive(key, map[string]any{})
		c, err := dial(t, s.URL)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		frame := 640 // 20 ms of 16 kHz 16-bit audio
		start := time.Now()
		for k := range 4 {
			if w := time.Until(start.Add(time.Duration(k) * every)); w > 0 {
				time.Sleep(w) // the sender's own pace, not settling
			}
			for i := range bunch {
				off := ((k*bunch + i) * frame) % (len(audio) - frame)
				if err := c.WriteMessage(websocket.BinaryMessage, audio[off:off+frame]); err != nil {
					t.Fatalf("bunch %d frame %d: %v", k, i, err)
				}
			}
		}
		c.WriteJSON(map[string]any{"type": "stop_recording"})
		if code, reason := closeOf(t, c, time.Minute); code != 1000 {
			t.Errorf("close %d %q, want 1000: the client kept under 50 frames a second", code, reason)
		}
	})
}
