package sphinx

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/earshot-dev/earshot/recognizer"
)

func TestTenantLimit(t *testing.T) {
	for _, tc := range []struct {
		name     string
		share    float64
		decoders int
		want     int
	}{
		{"unset: no bound", 0, 8, 0},
		{"whole pool: no bound", 1, 8, 0},
		{"half of 8", 0.5, 8, 4},
		{"half of 7 rounds down", 0.5, 7, 3},
		{"at least one decoder", 0.1, 2, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := Config{TenantShare: tc.share, Decoders: tc.decoders}
			if got := c.tenantLimit(); got != tc.want {
				t.Errorf("tenantLimit of %g x %d = %d, want %d", tc.share, tc.decoders, got, tc.want)
			}
		})
	}
}

// TestTenantShare: on a pool of 4 with a share of half, a tenant's third
// stream waits (and gives up at its context's end with ErrAtCapacity
// naming the share) while two decoders are idle, another tenant and
// streams of no tenant still get theirs, and the tenant's waiting stream
// gets a decoder as soon as one of its own is closed. A stream that gave
// up leaves nothing counted.
func TestTenantShare(t *testing.T) {
	cfg := Config{Decoders: 4, TenantShare: 0.5}
	cfg.SetDefaults()
	e, err := New(cfg, recognizer.NewCPU(cfg.LiveDecodes), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	open := func(tenant string) (recognizer.Stream, error) {
		ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
		defer cancel()
		return e.NewStream(ctx, recognizer.StreamOptions{Tenant: tenant})
	}
	var alice []recognizer.Stream
	for range 2 {
		st, err := open("alice")
		if err != nil {
			t.Fatalf("alice's stream within her share: %v", err)
		}
		alice = append(alice, st)
	}
	_, err = open("alice")
	if !errors.Is(err, recognizer.ErrAtCapacity) || !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "its share") {
		t.Fatalf("alice's third stream with 2 of 4 decoders idle: %v, want ErrAtCapacity naming the share", err)
	}
	if n := e.share.holding("alice"); n != 2 {
		t.Errorf("alice holds %d after a refused stream, want 2", n)
	}
	bob, err := open("bob")
	if err != nil {
		t.Fatalf("bob's stream beside alice's share: %v", err)
	}
	batch, err := open("")
	if err != nil {
		t.Fatalf("a stream of no tenant: %v", err)
	}
	if _, busy := e.Stats(); busy != 4 {
		t.Errorf("busy %d, want 4", busy)
	}
	batch.Close()

	// Alice's waiting stream gets the decoder one of hers gives back.
	got := make(chan error, 1)
	go func() {
		st, err := e.NewStream(t.Context(), recognizer.StreamOptions{Tenant: "alice"})
		if err == nil {
			st.Close()
		}
		got <- err
	}()
	alice[0].Close()
	if err := <-got; err != nil {
		t.Fatalf("alice's waiting stream after she closed one: %v", err)
	}
	alice[1].Close()
	bob.Close()
	if n := e.share.holding("alice") + e.share.holding("bob"); n != 0 {
		t.Errorf("decoders still counted after every stream closed: %d", n)
	}
	if _, busy := e.Stats(); busy != 0 {
		t.Errorf("busy %d after every stream closed, want 0", busy)
	}
}

// TestTenantShareOff: with the bound off (a box of one account), a tenant
// may hold the whole pool, and a stream waiting for its share goes on when
// the bound is turned off.
func TestTenantShareOff(t *testing.T) {
	cfg := Config{Decoders: 4, TenantShare: 0.5}
	cfg.SetDefaults()
	e, err := New(cfg, recognizer.NewCPU(cfg.LiveDecodes), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	var held []recognizer.Stream
	for range 2 {
		st, err := e.NewStream(t.Context(), recognizer.StreamOptions{Tenant: "solo"})
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, st)
	}
	got := make(chan error, 1)
	go func() {
		st, err := e.NewStream(t.Context(), recognizer.StreamOptions{Tenant: "solo"})
		if err == nil {
			held = append(held, st)
		}
		got <- err
	}()
	e.SetTenantShare(false)
	if err := <-got; err != nil {
		t.Fatalf("the waiting stream once the share is off: %v", err)
	}
	st, err := e.NewStream(t.Context(), recognizer.StreamOptions{Tenant: "solo"})
	if err != nil {
		t.Fatalf("the 4th stream of the only tenant: %v", err)
	}
	held = append(held, st)
	if n := e.share.holding("solo"); n != 4 {
		t.Errorf("solo holds %d, want 4", n)
	}
	for _, st := range held {
		st.Close()
	}
	if n := e.share.holding("solo"); n != 0 {
		t.Errorf("solo holds %d after closing every stream", n)
	}
}
