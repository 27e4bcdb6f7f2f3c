package media

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestFetch(t *testing.T) {
	audio := bytes.Repeat([]byte("RIFFdata"), 1000) // 8000 bytes
	mux := http.NewServeMux()
	mux.HandleFunc("/files/a.wav", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "audio/wav")
		w.Header().Set("Content-Length", strconv.Itoa(len(audio)))
		w.Write(audio)
	})
	mux.HandleFunc("/download", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Disposition", `attachment; filename="../../etc/call 7.mp3"`)
		w.Write(audio)
	})
	mux.HandleFunc("/chunked/", func(w http.ResponseWriter, r *http.Request) {
		w.(http.Flusher).Flush() // no Content-Length: chunked encoding
		for range 4 {
			w.Write(audio)
		}
	})
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/files/a.wav", http.StatusFound)
	})
	mux.HandleFunc("/loop", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/loop", http.StatusFound)
	})
	mux.HandleFunc("/ftp-redirect", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "ftp://example.com/a.wav", http.StatusFound)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	tests := []struct {
		name     string
		path     string
		o        *FetchOptions
		wantErr  error // from Fetch
		readErr  error // from reading the body
		filename string
		length   int64
	}{
		{"ok", "/files/a.wav?sig=secret", nil, nil, nil, "a.wav", 8000},
		{"content disposition", "/download", nil, nil, nil, "call 7.mp3", -1},
		{"redirect", "/redirect", nil, nil, nil, "a.wav", 8000},
		{"exactly max bytes", "/files/a.wav", &FetchOptions{MaxBytes: 8000}, nil, nil, "a.wav", 8000},
		{"404", "/missing.wav?sig=secret", nil, ErrFetch, nil, "", 0},
		{"declared too large", "/files/a.wav", &FetchOptions{MaxBytes: 7999}, ErrTooLarge, nil, "", 0},
		{"undeclared too large", "/chunked/b.wav", &FetchOptions{MaxBytes: 20000}, nil, ErrTooLarge, "b.wav", -1},
		{"undeclared within limit", "/chunked/", &FetchOptions{MaxBytes: 32000}, nil, nil, "chunked", -1},
		{"redirect loop", "/loop", nil, ErrFetch, nil, "", 0},
		{"redirect to ftp", "/ftp-redirect", nil, ErrFetch, nil, "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rem, err := Fetch(t.Context(), srv.URL+tt.path, tt.o)
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil) != (err == nil) {
				t.Fatalf("Fetch err = %v, want %v", err, tt.wantErr)
			}
			if err != nil {
				if strings.Contains(err.Error(), "secret") {
					t.Errorf("error message leaks the query: %v", err)
				}
				if tt.name == "404" && (!errors.Is(err, ErrStatus) ||
					err.Error() != "media: fetch "+srv.URL+"/missing.wav: status 404: "+ErrStatus.Error()) {
					t.Errorf("message %q, want ErrStatus with the status", err.Error())
				}
				return
			}
			defer rem.Body.Close()
			if rem.Filename != tt.filename || rem.Length != tt.length {
				t.Errorf("Filename %q Length %d, want %q %d", rem.Filename, rem.Length, tt.filename, tt.length)
			}
			body, err := io.ReadAll(rem.Body)
			if !errors.Is(err, tt.readErr) || (tt.readErr == nil) != (err == nil) {
				t.Fatalf("read err = %v, want %v", err, tt.readErr)
			}
			max := int64(1 << 30)
			if tt.o != nil {
				max = tt.o.MaxBytes
			}
			if int64(len(body)) > max {
				t.Fatalf("read %d bytes past the %d limit", len(body), max)
			}
			if err == nil && !bytes.Equal(body[:len(audio)], audio) {
				t.Fatal("body differs from what the server sent")
			}
		})
	}
}

// TestFetchTimeout checks the whole-request bound: before the headers
// arrive, and while the body trickles.
func TestFetchTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/body" {
			w.Write([]byte("RIFF"))
			w.(http.Flusher).Flush()
		}
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(func() { close(release); srv.Close() })
	o := &FetchOptions{Timeout: 200 * time.Millisecond}

	start := time.Now()
	_, err := Fetch(t.Context(), srv.URL+"/headers", o)
	if !errors.Is(err, ErrFetch) {
		t.Fatalf("headers never sent: err = %v, want ErrFetch", err)
	}
	if time.Since(start) > 10*time.Second {
		t.Fatalf("took %s", time.Since(start))
	}

	rem, err := Fetch(t.Context(), srv.URL+"/body", o)
	if err != nil {
		t.Fatal(err)
	}
	defer rem.Body.Close()
	b, err := io.ReadAll(rem.Body)
	if !errors.Is(err, ErrFetch) || string(b) != "RIFF" {
		t.Fatalf("stalled body: read %q, err = %v; want RIFF and ErrFetch", b, err)
	}
}

func TestFetchDenied(t *testing.T) {
	hit := make(chan struct{}, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hit <- struct{}{}
	}))
	t.Cleanup(srv.Close)
	deny := []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	for _, u := range []string{srv.URL, strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)} {
		_, err := Fetch(t.Context(), u+"/a.wav", &FetchOptions{Deny: deny})
		if !errors.Is(err, ErrFetch) || !strings.Contains(err.Error(), "denied") {
			t.Fatalf("%s: err = %v, want ErrFetch naming the denied range", u, err)
		}
	}
	select {
	case <-hit:
		t.Fatal("the denied server was reached")
	default:
	}
	// The defaults allow loopback.
	rem, err := Fetch(t.Context(), srv.URL+"/a.wav", nil)
	if err != nil {
		t.Fatalf("default deny list refused loopback: %v", err)
	}
	rem.Body.Close()
}

func TestFetchBadURL(t *testing.T) {
	for _, u := range []string{"ftp://example.com/a.wav", "file:///etc/passwd", "/relative/a.wav", "http://", "::bad"} {
		if _, err := Fetch(t.Context(), u, nil); !errors.Is(err, ErrUnsupported) {
			t.Errorf("Fetch(%q) err = %v, want ErrUnsupported", u, err)
		}
	}
	// Nothing listens on loopback port 1: a network error.
	if _, err := Fetch(t.Context(), "http://127.0.0.1:1/a.wav", nil); !errors.Is(err, ErrFetch) {
		t.Errorf("connection refused: err = %v, want ErrFetch", err)
	}
	if _, err := Fetch(t.Context(), "http://no-such-host.invalid/a.wav", &FetchOptions{Timeout: 10 * time.Second}); !errors.Is(err, ErrFetch) {
		t.Errorf("dns failure: err = %v, want ErrFetch", err)
	}
}

func TestFetchOptionsValidate(t *testing.T) {
	err := (&FetchOptions{MaxBytes: -1, Timeout: -1, Deny: []netip.Prefix{{}}}).Validate()
	for _, key := range []string{"max_bytes", "timeout", "deny[0]"} {
		if err == nil || !strings.Contains(err.Error(), key) {
			t.Errorf("Validate = %v, want %s named", err, key)
		}
	}
	var o FetchOptions
	o.SetDefaults()
	if o.MaxBytes != 1<<30 || o.Timeout != 5*time.Minute || len(o.Deny) != 3 {
		t.Fatalf("defaults = %+v", o)
	}
}
