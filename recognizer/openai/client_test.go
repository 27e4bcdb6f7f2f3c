package openai

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestErrorMessage(t *testing.T) {
	tests := []struct{ body, want string }{
		{`{"error":{"message":"Invalid file format.","type":"invalid_request_error"}}`, "Invalid file format."},
		{`{"error":"model not loaded"}`, "model not loaded"},
		{`{"detail":"Not authenticated"}`, "Not authenticated"},
		{`{"detail":[{"loc":["body","file"],"msg":"field required"}]}`, `[{"loc":["body","file"],"msg":"field required"}]`},
		{"Internal Server Error\n", "Internal Server Error"},
		{strings.Repeat("é", 300), strings.Repeat("é", 100) + "..."},
	}
	for _, tc := range tests {
		if got := errorMessage([]byte(tc.body)); got != tc.want {
			t.Errorf("%.40q: got %q, want %q", tc.body, got, tc.want)
		}
	}
}

// TestRetryRule: the one rule, over real HTTP: connection-level and
// 408/429/5xx answers are retried Retries times, other statuses and timed
// out attempts are not, Attempts sees and can stop every attempt.
func TestRetryRule(t *testing.T) {
	tests := []struct {
		name     string
		statuses []int // answer of each request in turn; 0 stalls past the timeout
		retries  int
		wantErr  error
		attempts int
	}{
		{"500 then 200", []int{500, 200}, 2, nil, 2},
		{"408, 429, 503 then 200", []int{408, 429, 503, 200}, 3, nil, 4},
		{"503 always", []int{503, 503, 503}, 2, ErrUnavailable, 3},
		{"400 is final", []int{400, 200}, 2, ErrBadResponse, 1},
		{"never retry", []int{500, 200}, -1, ErrStatus, 1},
		{"timeout is final", []int{0, 200}, 2, ErrTimeout, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var n atomic.Int32
			stall := make(chan struct{})
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				i := int(n.Add(1)) - 1
				switch code := tc.statuses[min(i, len(tc.statuses)-1)]; code {
				case 0:
					select {
					case <-r.Context().Done():
					case <-stall:
					}
				case 200:
					w.Write([]byte(`{"ok":true}`))
				default:
					w.Header().Set("Retry-After", "0")
					http.Error(w, `{"error":{"message":"busy"}}`, code)
				}
			}))
			defer srv.Close()
			defer close(stall) // before srv.Close: it waits for the handler
			ep := Endpoint{URL: srv.URL + "/v1", Model: "m", Timeout: 200 * time.Millisecond, Retries: tc.retries, Backoff: time.Millisecond}
			c := NewClient(ep, Options{})
			defer c.Close()
			body, attempts, err := c.Post(t.Context(), Request{Path: "/x", ContentType: "application/json", Body: []byte("{}")})
			if tc.wantErr == nil && (err != nil || string(body) != `{"ok":true}`) {
				t.Errorf("Post = %q, %v", body, err)
			}
			if tc.wantErr != nil && !errors.Is(err, tc.wantErr) {
				t.Errorf("Post error %v, want %v", err, tc.wantErr)
			}
			if attempts != tc.attempts || int(n.Load()) != tc.attempts {
				t.Errorf("%d attempts (%d requests), want %d", attempts, n.Load(), tc.attempts)
			}
		})
	}
	if got := parseRetryAfter("3600"); got != MaxRetryAfter {
		t.Errorf("Retry-After 3600 = %v, want the cap %v", got, MaxRetryAfter)
	}
}
