package daemon

import (
	"context"
	"sync"
	"time"
)

// The live pools' per-account bound (live.decoder_share) keeps room for
// the next account's first words, which only matters when there is a next
// account: an appliance of one account (a call centre's own box, the usual
// case) has each pool whole. tenants holds it on while more than one
// account can open live sessions: the accounts of the active API keys,
// and the accounts the doors open sessions for without a key (SIP routes,
// AddDoorAccounts). It is checked at start, before each live session is
// created while the bound is off (a key made a moment ago counts at once;
// once on, the check costs nothing per session), and every
// tenantCheckEvery (a revoked key's account stops counting).
const tenantCheckEvery = 30 * time.Second

type tenants struct {
	mu    sync.Mutex
	doors map[string]bool // guarded by mu: accounts doors open sessions for
	on    *bool           // guarded by mu: the state last set, nil before the first
}

// AddDoorAccounts names accounts a door opens live sessions for without an
// API key of theirs (the accounts of the SIP routes), so they count among
// the box's accounts (tenants).
func (d *Daemon) AddDoorAccounts(accounts ...string) {
	d.tenants.mu.Lock()
	if d.tenants.doors == nil {
		d.tenants.doors = map[string]bool{}
	}
	for _, a := range accounts {
		d.tenants.doors[a] = true
	}
	d.tenants.mu.Unlock()
	d.checkTenants(true)
}

// checkTenants turns the live pools' per-account bound on when more than
// one account can open live sessions, off otherwise; unless force, only
// while it is off (turning it off again is the ticker's).
func (d *Daemon) checkTenants(force bool) {
	d.tenants.mu.Lock()
	defer d.tenants.mu.Unlock()
	if !force && d.tenants.on != nil && *d.tenants.on {
		return
	}
	keys, err := d.db.Keys()
	if err != nil {
		d.log.Debug("cannot list keys for the live decoder share; left as it is", "error", err)
		return
	}
	accounts := map[string]bool{}
	for a := range d.tenants.doors {
		accounts[a] = true
	}
	for _, k := range keys {
		if k.Active() {
			accounts[k.Account] = true
		}
	}
	on := len(accounts) > 1
	if d.tenants.on != nil && *d.tenants.on == on {
		return
	}
	d.tenants.on = &on
	d.pl.SetTenantShare(on)
	d.log.Info("live decoder share per account", "on", on, "accounts", len(accounts), "share", d.cfg.Live.DecoderShare)
}

// runTenants checks the accounts every tenantCheckEvery until ctx ends.
func (d *Daemon) runTenants(ctx context.Context) error {
	t := time.NewTicker(tenantCheckEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			d.checkTenants(true)
		}
	}
}
