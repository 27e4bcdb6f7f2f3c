package storetest_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/earshot-dev/earshot/store/bolt"

	"github.com/earshot-dev/earshot/params"
	"github.com/earshot-dev/earshot/store"
	"github.com/earshot-dev/earshot/store/storetest"
)

// roundTripCaps is a fixed appliance for the round trip: English, and an
// uploaded file for every id.
var roundTripCaps = params.Capabilities{Languages: []string{"en"}, LocalFile: func(id string) bool { return id != "" }}

// FuzzAcceptedRoundTrip: every request the API accepts is stored and read
// back equal (issue 43 finding 1: custom_metadata 1e309 was accepted, then
// neither the store nor the worker could read the job back). A body that
// params accepts, as a pre-recorded job and as a live session, is stored as
// the daemon stores it (custom_metadata on the job, request_params as the
// marshalled params); the job reads back by id and by list with equal
// custom_metadata and byte-equal params, and those params decode again into
// the same request, as the worker and the live door decode them.
func FuzzAcceptedRoundTrip(f *testing.F) {
	for _, s := range []string{
		`{"audio_url":"http://h/a.wav","custom_metadata":{"x":1e309}}`,
		`{"audio_url":"http://h/a.wav","custom_metadata":{"x":-1e400,"y":[1e999,{"z":0.1e-400}],"n":12345678901234567890123}}`,
		`{"custom_metadata":{"x":-1e400}}`,
		`{"audio_url":"http://h/a.wav","custom_vocabulary":["a",{"value":"b","intensity":0.5}],"custom_metadata":{"a":1.50}}`,
		`{"encoding":"wav/ulaw","sample_rate":8000,"custom_metadata":{"k":"\u0000","e":1E+2}}`,
	} {
		f.Add([]byte(s))
	}
	db := storetest.Open(f)
	n := 0
	f.Fuzz(func(t *testing.T, body []byte) {
		if pr, err := params.DecodePreRecorded(body, roundTripCaps); err == nil {
			n++
			roundTrip(t, db, fmt.Sprintf("pr-%d", n), store.KindPreRecorded, pr.CustomMetadata, pr,
				func(b []byte) (any, error) { return params.StoredPreRecorded(b) })
		}
		if lv, err := params.DecodeLive(body, roundTripCaps); err == nil {
			n++
			roundTrip(t, db, fmt.Sprintf("live-%d", n), store.KindLive, lv.CustomMetadata, lv,
				func(b []byte) (any, error) { return params.StoredLive(b) })
		}
	})
}

// roundTrip stores a job of kind with md and request p, reads it back and
// decodes its params as every reader does (params.Stored*: decode).
func roundTrip(t *testing.T, db *bolt.DB, id string, kind store.Kind, md store.Metadata, p any, decode func([]byte) (any, error)) {
	t.Helper()
	raw, err := json.Marshal(p)
	if err != nil {
		t.Fatalf("accepted request does not marshal: %v", err)
	}
	j := &store.Job{ID: id, Account: "fuzz", Kind: kind, Status: store.StatusProcessing, CreatedAt: time.Now().UTC(),
		CustomMetadata: md, PostSessionMetadata: store.Metadata{}, Params: raw}
	if err := db.CreateJob(j); err != nil {
		t.Fatalf("accepted request not stored: %v", err)
	}
	got, err := db.Job(id)
	if err != nil {
		t.Fatalf("stored job not read back: %v", err)
	}
	if !reflect.DeepEqual(got.CustomMetadata, md) || !bytes.Equal(got.Params, raw) || got.Unreadable() != nil {
		t.Fatalf("read back custom_metadata %#v params %s, stored %#v %s", got.CustomMetadata, got.Params, md, raw)
	}
	list, err := db.ListJobs(store.ListQuery{Account: "fuzz", Kind: kind, Limit: 1})
	if err != nil || len(list) != 1 {
		t.Fatalf("list after storing: %v, %v", list, err)
	}
	fresh, err := decode(got.Params)
	if err != nil {
		t.Fatalf("stored params do not decode as the worker decodes them: %v\n%s", err, got.Params)
	}
	again, err := json.Marshal(fresh)
	if err != nil || !bytes.Equal(again, raw) {
		t.Fatalf("stored params decode to another request:\n%s\n%s", again, raw)
	}
	if err := db.DeleteJob(id); err != nil {
		t.Fatalf("delete: %v", err)
	}
}
