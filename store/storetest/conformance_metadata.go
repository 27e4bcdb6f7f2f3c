package storetest

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/earshot-dev/earshot/store"
)

// metadataCases: what the API accepts as custom_metadata (numbers kept as
// json.Number, any magnitude JSON allows) is stored and read back equal, by
// every path that reads a job (issue 43 finding 1: 1e309 was accepted,
// then every read of the job, the worker's claim and the next start failed
// on decoding it into float64).
func metadataCases() []Case {
	return []Case{
		{"MetadataNumbersRoundTrip", func(t *testing.T, s store.Store) {
			md := store.Metadata{"big": json.Number("1e309"), "small": json.Number("-1e400"),
				"exact": json.Number("12345678901234567890123"), "s": "x", "nested": map[string]any{"n": json.Number("1e999")}}
			j := newJob("md", "a", store.KindPreRecorded, store.StatusQueued, t0)
			j.CustomMetadata = md
			j.PostSessionMetadata = store.Metadata{"n": json.Number("2e308")}
			mustCreate(t, s, j)
			live := newJob("mdlive", "a", store.KindLive, store.StatusProcessing, t0)
			live.CustomMetadata = store.Metadata{"x": json.Number("-1e400")}
			mustCreate(t, s, live)

			got, err := s.Job("md")
			if err != nil {
				t.Fatalf("Job: %v", err)
			}
			if !reflect.DeepEqual(got.CustomMetadata, md) || !reflect.DeepEqual(got.PostSessionMetadata, j.PostSessionMetadata) {
				t.Fatalf("read back %v / %v, want %v / %v", got.CustomMetadata, got.PostSessionMetadata, md, j.PostSessionMetadata)
			}
			list, err := s.ListJobs(store.ListQuery{Account: "a", Kind: store.KindLive})
			if err != nil || len(list) != 1 || !reflect.DeepEqual(list[0].CustomMetadata, live.CustomMetadata) {
				t.Fatalf("ListJobs(live) = %v, %v", list, err)
			}
			found, err := s.ListJobs(store.ListQuery{Account: "a", Kind: store.KindPreRecorded, Metadata: map[string]string{"big": "1e309"}})
			if err != nil || len(found) != 1 {
				t.Fatalf("ListJobs(big=1e309) = %v, %v; want the job", ids(found), err)
			}
			claimed, err := s.ClaimNext(store.KindPreRecorded)
			if err != nil || claimed.ID != "md" || !reflect.DeepEqual(claimed.CustomMetadata, md) {
				t.Fatalf("ClaimNext = %v, %v", claimed, err)
			}
			if _, err := s.Recover(store.RecoverOptions{}); err != nil {
				t.Fatalf("Recover: %v", err)
			}
			if err := s.DeleteJob("md"); err != nil {
				t.Fatalf("DeleteJob: %v", err)
			}
		}},
	}
}
