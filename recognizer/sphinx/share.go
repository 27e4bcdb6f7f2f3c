package sphinx

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/earshot-dev/earshot/recognizer"
)

// tenantShare bounds the decoders of one pool that one tenant's streams
// (recognizer.StreamOptions.Tenant: a live session's account) hold at
// once, so that one tenant's channels cannot take every decoder of a pool
// while another tenant's channel waits for one (issue 43: an 8-channel
// session of one account held the whole live pool of 8, and a mono
// session of another lost 8 of its 18 finals to "no decoder available").
// A stream holds its decoder through an utterance and the short pauses
// after it (a segment, up to 20 s) and cannot be made to give it back, so
// the bound holds whether or not another tenant is waiting: the rest of
// the pool stays for the others. It holds while the box serves more than
// one tenant (SetTenantShare, which the daemon calls with whether more than
// one account can open live sessions): an appliance of one account has the
// whole pool, as no other account's first words need room kept for them.
// Streams without a tenant (whole recordings, batch passes) are not
// counted. Safe for concurrent use.
type tenantShare struct {
	limit  int         // decoders one tenant may hold, >= 1
	pool   int         // the pool's size, for messages
	active atomic.Bool // the bound holds (true until SetTenantShare says otherwise)

	mu    sync.Mutex
	held  map[string]int // guarded by mu: decoders each tenant holds, no zero entries
	freed chan struct{}  // guarded by mu: closed (and replaced) when a tenant gives one back
}

// newTenantShare is the bound of cfg (Config.TenantShare) on its pool,
// nil when there is none.
func newTenantShare(cfg Config) *tenantShare {
	limit := cfg.tenantLimit()
	if limit == 0 {
		return nil
	}
	t := &tenantShare{limit: limit, pool: cfg.Decoders, held: map[string]int{}, freed: make(chan struct{})}
	t.active.Store(true)
	return t
}

// setActive turns the bound on or off, waking the streams that wait for
// their share when it goes off. Nil-safe.
func (t *tenantShare) setActive(on bool) {
	if t == nil || t.active.Swap(on) == on || on {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	close(t.freed)
	t.freed = make(chan struct{})
}

// take counts one more decoder for tenant, waiting while the tenant holds
// its share, until ctx or closed ends: then an error wrapping
// recognizer.ErrAtCapacity (and the context's cause) or
// recognizer.ErrClosed. Nil-safe; an empty tenant is not counted.
func (t *tenantShare) take(ctx context.Context, tenant string, closed <-chan struct{}) error {
	if t == nil || tenant == "" {
		return nil
	}
	for {
		t.mu.Lock()
		if t.held[tenant] < t.limit || !t.active.Load() {
			t.held[tenant]++
			t.mu.Unlock()
			return nil
		}
		freed := t.freed
		t.mu.Unlock()
		select {
		case <-freed:
		case <-closed:
			return recognizer.ErrClosed
		case <-ctx.Done():
			return fmt.Errorf("sphinx: wait for decoder: this account's streams hold %d of the pool's %d decoders, its share: %w (%w)",
				t.limit, t.pool, recognizer.ErrAtCapacity, context.Cause(ctx))
		}
	}
}

// give returns the decoder take counted for tenant and wakes the streams
// waiting for their tenant's share. Nil-safe.
func (t *tenantShare) give(tenant string) {
	if t == nil || tenant == "" {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.held[tenant]--; t.held[tenant] <= 0 {
		delete(t.held, tenant)
	}
	close(t.freed)
	t.freed = make(chan struct{})
}

// holding is how many decoders tenant holds now. Nil-safe.
func (t *tenantShare) holding(tenant string) int {
	if t == nil {
		return 0
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.held[tenant]
}
