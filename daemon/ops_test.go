package daemon

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/earshot-dev/earshot/store"
)

// TestShutdownStages: the stages run in order, live sessions, workers,
// outbox, each stopped when its stage ends; workers still running at the
// bound have their jobs requeued (only those this node still claims),
// and no worker claims once the shutdown began.
func TestShutdownStages(t *testing.T) {
	d, db := newTestDaemon(t, func(c *Config) { c.Shutdown.Workers = time.Millisecond })
	queueJob(t, db, "mine", "acme", 1)
	queueJob(t, db, "download", "acme", 2)
	claim, _ := db.ClaimNext(store.KindPreRecorded)
	if _, err := db.UpdateJob("download", func(j *store.Job) ([]*store.Delivery, error) { j.AwaitingAudio = true; return nil, nil }); err != nil {
		t.Fatal(err)
	}
	_, cancelMine := context.WithCancel(t.Context())
	defer cancelMine()
	d.running["mine"] = runningJob{cancel: cancelMine, attempts: claim.Attempts}
	d.running["download"] = runningJob{cancel: cancelMine}
	d.workersDone = make(chan struct{}) // a worker still in its decoder call

	outboxCtx, stopOutbox := context.WithCancel(t.Context())
	defer stopOutbox()
	var wg sync.WaitGroup
	wg.Go(func() { d.outbox.Run(outboxCtx) }) // the outbox stage waits for it
	var order []string
	stop := func(name string) context.CancelFunc { return func() { order = append(order, name) } }
	d.shutdown(stoppers{live: stop("live"), work: stop("work"), outbox: func() { order = append(order, "outbox"); stopOutbox() }})
	wg.Wait()
	if got := len(order); got != 3 || order[0] != "live" || order[1] != "work" || order[2] != "outbox" {
		t.Errorf("stages %v", order)
	}
	if !d.stopped() {
		t.Error("not stopped after the shutdown")
	}
	if j, _ := db.Job("mine"); j.Status != store.StatusQueued {
		t.Errorf("claimed job left %s at the workers' bound", j.Status)
	}
	if j, _ := db.Job("download"); j.Status != store.StatusQueued || !j.AwaitingAudio {
		t.Errorf("download: %s awaiting %v", j.Status, j.AwaitingAudio)
	}
	if err := d.runWorker(t.Context(), 0); err != nil {
		t.Errorf("worker after the shutdown: %v", err)
	}
	if j, _ := db.Job("mine"); j.Status != store.StatusQueued {
		t.Error("a worker claimed after the shutdown began")
	}
}

// TestCheckTenants: each account's share of the live pools is bound only
// while more than one account can open sessions: active keys' accounts
// and the doors' (SIP routes'); a revoked key's account does not count.
func TestCheckTenants(t *testing.T) {
	d, db := newTestDaemon(t, nil)
	on := func() bool {
		d.tenants.mu.Lock()
		defer d.tenants.mu.Unlock()
		return d.tenants.on != nil && *d.tenants.on
	}
	if _, _, err := db.CreateKey("acme", store.KeyGrant{}); err != nil {
		t.Fatal(err)
	}
	d.checkTenants(true)
	if on() {
		t.Error("share bound with one account")
	}
	_, k, err := db.CreateKey("beta", store.KeyGrant{})
	if err != nil {
		t.Fatal(err)
	}
	d.checkTenants(false)
	if !on() {
		t.Error("share not bound with two accounts")
	}
	if err := d.RevokeKey(t.Context(), k.ID); err != nil {
		t.Fatal(err)
	}
	d.checkTenants(true)
	if on() {
		t.Error("a revoked key's account still counted")
	}
	d.AddDoorAccounts("sip-route")
	if !on() {
		t.Error("a door's account not counted")
	}
}

// TestNodesOneBox: on a store without a cluster, GET /admin/nodes lists
// this node alone, alive, with its free live capacity and running jobs.
func TestNodesOneBox(t *testing.T) {
	d, _ := newTestDaemon(t, func(c *Config) { c.Cluster.NodeID = "box-1"; c.Live.Capacity = 3 })
	d.running["j"] = runningJob{}
	ns, err := d.Nodes(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(ns) != 1 || ns[0].NodeID != "box-1" || !ns[0].Alive || ns[0].LiveCapacity != 3 || ns[0].LiveFree != 3 || ns[0].RunningJobs != 1 {
		t.Errorf("nodes %+v", ns)
	}
}

// TestKeys: a key authenticates until revoked; an empty secret is 401
// without reaching the store.
func TestKeys(t *testing.T) {
	d, db := newTestDaemon(t, nil)
	secret, k, err := d.CreateKey(t.Context(), "acme", store.KeyGrant{})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := d.AuthenticateKey(secret); err != nil || got.ID != k.ID {
		t.Fatalf("AuthenticateKey = %+v, %v", got, err)
	}
	db.Fault = func(op string) error { t.Errorf("%s reached the store", op); return nil }
	if _, err := d.AuthenticateKey(""); err == nil {
		t.Error("empty secret authenticated")
	}
	db.Fault = nil
	if err := d.RevokeKey(t.Context(), k.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := d.AuthenticateKey(secret); err == nil {
		t.Error("revoked key authenticated")
	}
	if ks, _ := d.Keys(t.Context()); len(ks) != 1 || ks[0].Active() {
		t.Errorf("keys %+v", ks)
	}
}
