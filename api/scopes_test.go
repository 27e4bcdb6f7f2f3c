package api

import (
	"os"
	"regexp"
	"testing"
)

// TestRouteScopes: every route New registers behind a key (s.auth,
// s.openAIAuth, or GET /v2/live's liveRoot, which lists with s.auth) has
// its row in routeScopes, and every row names a registered route: the
// table is the whole mapping, with no route refused by omission and no
// stale row.
func TestRouteScopes(t *testing.T) {
	src, err := os.ReadFile("server.go")
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`r\.(GET|POST|DELETE|PATCH|PUT)\("([^"]+)", s\.(auth|openAIAuth|liveRoot)\b`)
	keyed := map[string]bool{}
	for _, m := range re.FindAllStringSubmatch(string(src), -1) {
		keyed[m[1]+" "+m[2]] = true
	}
	if len(keyed) < 20 {
		t.Fatalf("found %d keyed routes in server.go; the pattern no longer matches New", len(keyed))
	}
	for r := range keyed {
		if _, ok := routeScopes[r]; !ok {
			t.Errorf("keyed route %s has no row in routeScopes: every key is refused it", r)
		}
	}
	for r := range routeScopes {
		if !keyed[r] {
			t.Errorf("routeScopes row %s names no keyed route of server.go", r)
		}
	}
}
