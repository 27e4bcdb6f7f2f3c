package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/fasthttp/websocket"
)

// trickle is one slowloris client from src: it opens a connection to addr
// and sends a request header one byte a second, never finishing it; when
// the daemon closes the connection it opens another, until ctx ends. Each
// connection it opens is counted in opened.
func trickle(ctx context.Context, addr, src string, opened *atomic.Int64) {
	header := []byte("GET /v2/pre-recorded HTTP/1.1\r\nHost: earshot\r\nX-Padding: " + strings.Repeat("a", 4000))
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}}
	tick := time.NewTicker(time.Second) // the attack's own pace, not a wait for state
	defer tick.Stop()
	for ctx.Err() == nil {
		c, err := d.DialContext(ctx, "tcp", addr)
		if err != nil {
			select {
			case <-ctx.Done():
			case <-tick.C:
			}
			continue
		}
		opened.Add(1)
		for i := 0; ctx.Err() == nil; i++ {
			if _, err := c.Write(header[i%len(header) : i%len(header)+1]); err != nil {
				break
			}
			select {
			case <-ctx.Done():
			case <-tick.C:
			}
		}
		c.Close()
	}
}

// freshClient makes a new connection for every request, as a client
// arriving during the attack does.
func freshClient() *http.Client {
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
}

// TestSlowClientsDoNotLockOut is the slowloris probe at a smaller
// scale: more connections than api.max_conns, from several source
// addresses, each trickling a header byte by byte and reconnecting when
// closed. /healthz and an authenticated call must still answer 200 on new
// connections.
func TestSlowClientsDoNotLockOut(t *testing.T) {
	const maxConns, attackers = 64, 96
	d := startDaemon(t, "", fmt.Sprintf("api:\n  max_conns: %d\n", maxConns))
	key := createKey(t, d.DataDir, "acme")
	addr := strings.TrimPrefix(d.Base, "http://")
	wav, _ := clip(t, "pocketsphinx-goforward.wav")
	audio := pcmOf(t, wav)
	// A live session connected before the flood keeps its socket: a valid
	// token counts as a key.
	ws, err := dial(t, d.createLive(key, map[string]any{}).URL)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	if err := ws.WriteMessage(websocket.BinaryMessage, audio[:3200]); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	var opened atomic.Int64
	for i := range attackers {
		src := fmt.Sprintf("127.0.0.%d", 2+i%4) // every 127/8 address is loopback on Linux
		wg.Go(func() { trickle(ctx, addr, src, &opened) })
	}
	t.Cleanup(func() { cancel(); wg.Wait() })
	deadline := time.Now().Add(30 * time.Second)
	for opened.Load() < attackers {
		if time.Now().After(deadline) {
			t.Fatalf("only %d of %d slow connections opened", opened.Load(), attackers)
		}
		time.Sleep(50 * time.Millisecond) // polling the attackers' progress
	}

	client := freshClient()
	for i := range 20 {
		for _, c := range []struct{ path, key string }{{"/healthz", ""}, {"/v2/pre-recorded", key}} {
			req, _ := http.NewRequestWithContext(t.Context(), "GET", d.Base+c.path, nil)
			if c.key != "" {
				req.Header.Set("x-service-key", c.key)
			}
			resp, err := client.Do(req)
			if err != nil {
				t.Fatalf("round %d: GET %s during the slow-client flood: %v", i, c.path, err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Fatalf("round %d: GET %s during the slow-client flood: %d %s", i, c.path, resp.StatusCode, body)
			}
		}
	}
	if err := ws.WriteMessage(websocket.BinaryMessage, audio[3200:6400]); err != nil {
		t.Fatalf("live socket after the flood: %v", err)
	}
	ws.WriteJSON(map[string]any{"type": "stop_recording"})
	if code, reason := closeOf(t, ws, time.Minute); code != 1000 {
		t.Errorf("live socket during the flood: close %d %q, want 1000", code, reason)
	}
}

// TestSlowClientBounds checks the two bounds one slow client meets: its
// header must arrive within api.header_timeout, and one source address
// gets at most api.max_conns_per_ip connections.
func TestSlowClientBounds(t *testing.T) {
	d := startDaemon(t, "", "api:\n  header_timeout: 3s\n  max_conns_per_ip: 4\n")
	addr := strings.TrimPrefix(d.Base, "http://")
	dial := func(src string) net.Conn {
		t.Helper()
		dl := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}}
		c, err := dl.DialContext(t.Context(), "tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	// closedByDaemon reads c until the daemon ends it, and returns what
	// it sent; the client's own deadline only catches a daemon that
	// never does.
	closedByDaemon := func(c net.Conn) string {
		t.Helper()
		c.SetReadDeadline(time.Now().Add(30 * time.Second))
		b, err := io.ReadAll(c)
		if err != nil && !errors.Is(err, syscall.ECONNRESET) {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				t.Fatalf("the daemon kept a connection open 30s (read %q)", b)
			}
			t.Fatal(err)
		}
		return string(b)
	}

	held := make([]net.Conn, 4)
	for i := range held {
		held[i] = dial("127.0.0.7")
		if _, err := held[i].Write([]byte("GET /healthz HTTP/1.1\r\nHost: x\r\n")); err != nil {
			t.Fatal(err)
		}
	}
	if got := closedByDaemon(dial("127.0.0.7")); got != "" {
		t.Errorf("fifth connection from one address: got %q, want it closed unanswered", got)
	}
	client := freshClient()
	resp, err := client.Get(d.Base + "/healthz")
	if err != nil {
		t.Fatalf("healthz from another address: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("healthz from another address: %d", resp.StatusCode)
	}
	for i, c := range held {
		if got := closedByDaemon(c); !strings.HasPrefix(got, "HTTP/1.1 408") || !strings.Contains(got, `"statusCode":408`) || !strings.Contains(got, `"request_id":"`) {
			t.Errorf("unfinished header %d: got %q, want 408 with the error body", i, got)
		}
	}
}

// TestSlowBodyWithKey: a client with a valid key that trickles an upload
// (100 bytes a second, far below api.min_body_bytes_per_second) is cut
// with 408 soon after the 10 s grace, not held for api.read_timeout
// (10 minutes): whether it trickles from the first byte (fasthttp's own
// read of the first 8 KiB) or after 16 KiB (the upload handler's read).
func TestSlowBodyWithKey(t *testing.T) {
	t.Parallel() // waits more than it computes: see doc.go
	d := startDaemon(t, "", "")
	key := createKey(t, d.DataDir, "acme")
	wav, _ := clip(t, "pocketsphinx-goforward.wav")
	body, ctype := multipartAudio(t, wav)

	for _, fast := range []int{1000, 16 << 10} {
		t.Run(fmt.Sprintf("after %d bytes", fast), func(t *testing.T) {
			c, err := net.Dial("tcp", strings.TrimPrefix(d.Base, "http://"))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			fmt.Fprintf(c, "POST /v2/upload HTTP/1.1\r\nHost: earshot\r\nx-service-key: %s\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n",
				key, ctype, len(body))
			rest := body
			c.Write(rest[:fast])
			rest = rest[fast:]
			ctx, cancel := context.WithCancel(t.Context())
			var wg sync.WaitGroup
			defer func() { cancel(); wg.Wait() }()
			wg.Go(func() {
				tick := time.NewTicker(time.Second) // the slow client's own pace
				defer tick.Stop()
				for len(rest) > 100 {
					if _, err := c.Write(rest[:100]); err != nil {
						return
					}
					rest = rest[100:]
					select {
					case <-ctx.Done():
						return
					case <-tick.C:
					}
				}
			})
			c.SetReadDeadline(time.Now().Add(60 * time.Second))
			answer, err := io.ReadAll(c)
			if err != nil && !errors.Is(err, syscall.ECONNRESET) {
				t.Fatalf("trickled upload: no answer within 60s (read %q): %v", answer, err)
			}
			if !bytes.HasPrefix(answer, []byte("HTTP/1.1 408")) || !bytes.Contains(answer, []byte(`"statusCode":408`)) {
				t.Errorf("trickled upload: %q, want 408 with the error body", answer)
			}
		})
	}
}
