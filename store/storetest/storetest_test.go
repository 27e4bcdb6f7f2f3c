package storetest_test

import (
	"testing"
	"time"

	"github.com/earshot-dev/earshot/store"
	"github.com/earshot-dev/earshot/store/storetest"
)

func TestOpen(t *testing.T) {
	db := storetest.Open(t)
	j := &store.Job{ID: "j", Account: "a", Kind: store.KindLive, Status: store.StatusQueued, CreatedAt: time.Now()}
	if err := db.CreateJob(j); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Job("j"); err != nil {
		t.Fatal(err)
	}
	// Two stores in one test are independent.
	if other := storetest.Open(t); other.Dir() == db.Dir() {
		t.Error("two Opens share a directory")
	}
}

func TestOpenAfterClose(t *testing.T) {
	db := storetest.Open(t)
	if err := db.Close(); err != nil { // the cleanup must cope
		t.Fatal(err)
	}
}
