package media

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/netip"
	"net/url"
	"path"
	"strings"
	"sync"
	"time"
)

// Remote is a fetched audio body. The caller must Close Body, which also
// releases the request's timer.
type Remote struct {
	Body        io.ReadCloser // bounded by MaxBytes and Timeout
	ContentType string
	Filename    string // from Content-Disposition, else the final URL path's last element, "" if none
	Length      int64  // declared Content-Length, -1 unknown
}

// Fetch GETs an http(s) URL. Other schemes return ErrUnsupported. A network
// or DNS failure, a denied destination address (also ErrDenied), a redirect
// loop or a non-2xx status (also ErrStatus) returns an error wrapping
// ErrFetch with the reason, e.g. "media: fetch http://x/a.wav: status 404:
// media: remote answered an error status" (query and user info are left
// out of messages, as they often carry credentials). A Content-Length over
// MaxBytes returns ErrTooLarge before the body is read. The Body's Read
// fails with ErrTooLarge once more than MaxBytes arrive, and with ErrFetch
// after the Timeout or the end of ctx. A nil o means defaults.
func Fetch(ctx context.Context, rawURL string, o *FetchOptions) (*Remote, error) {
	var opts FetchOptions
	if o != nil {
		opts = *o
	}
	opts.SetDefaults()
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("%w: audio url: %w", ErrUnsupported, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("%w: url scheme %q (want http or https)", ErrUnsupported, u.Scheme)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("%w: url %s has no host", ErrUnsupported, safeURL(u))
	}
	client := opts.Client
	if client == nil {
		client = newClient(opts.Deny)
	}
	rctx, cancel := context.WithTimeoutCause(ctx, opts.Timeout,
		fmt.Errorf("timed out after %s: %w", opts.Timeout, context.DeadlineExceeded))
	req, err := http.NewRequestWithContext(rctx, http.MethodGet, u.String(), nil)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("%w %s: %w", ErrFetch, safeURL(u), err)
	}
	resp, err := client.Do(req)
	if err != nil {
		if c := context.Cause(rctx); c != nil {
			err = c // the timeout or the caller's cancellation, not the symptom
		}
		cancel()
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // its message repeats the full URL
		}
		return nil, fmt.Errorf("%w %s: %w", ErrFetch, safeURL(u), err)
	}
	final := safeURL(resp.Request.URL)
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		resp.Body.Close()
		cancel()
		return nil, fmt.Errorf("%w %s: status %d: %w", ErrFetch, final, resp.StatusCode, ErrStatus)
	}
	if resp.ContentLength > opts.MaxBytes {
		resp.Body.Close()
		cancel()
		return nil, fmt.Errorf("%w: %s declares %d bytes > limit %d", ErrTooLarge, final, resp.ContentLength, opts.MaxBytes)
	}
	return &Remote{
		Body:        &boundedBody{rc: resp.Body, ctx: rctx, cancel: cancel, left: opts.MaxBytes, max: opts.MaxBytes, url: final},
		ContentType: resp.Header.Get("Content-Type"),
		Filename:    remoteFilename(resp),
		Length:      resp.ContentLength,
	}, nil
}

// safeURL renders u for messages without user info, query or fragment.
func safeURL(u *url.URL) string {
	c := url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}
	return c.String()
}

// remoteFilename returns the Content-Disposition filename, else the final
// URL path's last element, reduced to a base name without separators.
func remoteFilename(resp *http.Response) string {
	name := ""
	if cd := resp.Header.Get("Content-Disposition"); cd != "" {
		if _, params, err := mime.ParseMediaType(cd); err == nil {
			name = params["filename"]
		}
	}
	if name == "" && resp.Request != nil {
		name = path.Base(resp.Request.URL.Path)
	}
	name = strings.ReplaceAll(name, "\\", "/")
	name = path.Base(name)
	if name == "." || name == "/" || name == ".." {
		return ""
	}
	return name
}

// maxHeaderBytes bounds the status line and headers of a fetch's answer,
// and of each redirect: 256 KiB, what Chromium takes of a response's
// headers, so a server a browser can download from passes. net/http's own
// bound is 10 MiB, and a 9.5 MB Content-Disposition filename came through
// it whole (issue 43).
const maxHeaderBytes = 256 << 10

// newClient builds the default client: a dialer that refuses denied
// addresses after DNS resolution, no proxy, no transparent decompression,
// response headers of at most maxHeaderBytes, at most maxRedirects
// redirects and only to http(s).
func newClient(deny []netip.Prefix) *http.Client {
	d := Guard{Deny: deny}.Dialer(30 * time.Second)
	tr := &http.Transport{
		Proxy:             nil,
		DialContext:       d.DialContext,
		ForceAttemptHTTP2: true,
		DisableKeepAlives: true, // one request per client: nothing idles after Close
		// No Accept-Encoding, no transparent gunzip: the body is stored
		// as sent, so MaxBytes bounds the bytes on disk, and a small gzip
		// that expands a thousandfold stays small (and is not audio).
		DisableCompression:     true,
		TLSHandshakeTimeout:    30 * time.Second,
		ResponseHeaderTimeout:  2 * time.Minute,
		MaxResponseHeaderBytes: maxHeaderBytes,
		MaxIdleConns:           4,
		IdleConnTimeout:        30 * time.Second,
	}
	return &http.Client{
		Transport: tr,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) > maxRedirects {
				return fmt.Errorf("more than %d redirects", maxRedirects)
			}
			if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
				return fmt.Errorf("redirect to scheme %q", req.URL.Scheme)
			}
			return nil
		},
	}
}

// boundedBody enforces MaxBytes and turns transport errors into ErrFetch.
type boundedBody struct {
	rc     io.ReadCloser
	ctx    context.Context // the request's lifetime, ended by cancel
	cancel context.CancelFunc
	left   int64 // bytes still allowed
	max    int64
	url    string
	once   sync.Once
}

func (b *boundedBody) Read(p []byte) (int, error) {
	if b.left < 0 {
		return 0, fmt.Errorf("%w: %s body over %d bytes", ErrTooLarge, b.url, b.max)
	}
	// Read one byte past the limit to tell "exactly max" from "more".
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	if b.left < 0 {
		return n + int(b.left), fmt.Errorf("%w: %s body over %d bytes", ErrTooLarge, b.url, b.max)
	}
	if err != nil && !errors.Is(err, io.EOF) {
		if c := context.Cause(b.ctx); c != nil {
			err = c
		}
		return n, fmt.Errorf("%w %s: read body: %w", ErrFetch, b.url, err)
	}
	return n, err
}

// Close closes the body and releases the request's timer. Idempotent.
func (b *boundedBody) Close() error {
	var err error
	b.once.Do(func() {
		err = b.rc.Close()
		b.cancel()
	})
	return err
}
