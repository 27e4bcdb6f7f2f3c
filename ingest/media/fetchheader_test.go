package media

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestFetchHeaderBound: an answer (or a redirect) whose headers pass
// maxHeaderBytes fails Fetch with ErrFetch before any of it is kept;
// headers a browser takes pass. net/http alone took 10 MiB.
func TestFetchHeaderBound(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/named/{n}", func(w http.ResponseWriter, r *http.Request) {
		n := map[string]int{"under": maxHeaderBytes - 4096, "over": maxHeaderBytes + 1}[r.PathValue("n")]
		w.Header().Set("Content-Disposition", `attachment; filename="`+strings.Repeat("n", n)+`.wav"`)
		w.Write([]byte("RIFF"))
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("RIFF")) })
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/"+strings.Repeat("r", maxHeaderBytes), http.StatusFound)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	tests := []struct {
		path    string
		wantErr error
	}{
		{"/named/under", nil},
		{"/named/over", ErrFetch},
		{"/redirect", ErrFetch},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			rem, err := Fetch(t.Context(), srv.URL+tt.path, &FetchOptions{Deny: DefaultDeny()})
			if !errors.Is(err, tt.wantErr) || tt.wantErr == nil && err != nil {
				t.Fatalf("Fetch = %v, want %v", err, tt.wantErr)
			}
			if rem != nil {
				rem.Body.Close()
			}
		})
	}
}
