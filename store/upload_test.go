package store_test

import (
	"errors"
	"reflect"
	"testing"

	"github.com/earshot-dev/earshot/store"
	"github.com/earshot-dev/earshot/store/storetest"
)

func TestUploads(t *testing.T) {
	db := storetest.Open(t)
	u := &store.Upload{ID: "u1", Account: "acme", Filename: "call.mp3", Extension: "mp3", Size: 12345,
		AudioDuration: 61.5, Channels: 2, CreatedAt: t0, Blob: "u1.mp3"}
	tests := []struct {
		name string
		u    *store.Upload
		want error
	}{
		{"ok", u, nil},
		{"replace", u, nil},
		{"no id", &store.Upload{Account: "acme"}, store.ErrInvalid},
		{"no account", &store.Upload{ID: "u2"}, store.ErrInvalid},
		{"nil", nil, store.ErrInvalid},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := db.PutUpload(tc.u); !errors.Is(err, tc.want) {
				t.Errorf("PutUpload = %v, want %v", err, tc.want)
			}
		})
	}
	got, err := db.Upload("u1")
	if err != nil {
		t.Fatal(err)
	}
	want := *u
	want.CreatedAt = t0.UTC()
	if !reflect.DeepEqual(got, &want) {
		t.Errorf("Upload = %+v, want %+v", got, &want)
	}
	if _, err := db.Upload("u2"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Upload(unknown) = %v, want ErrNotFound", err)
	}
	for range 2 {
		if err := db.DeleteUpload("u1"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.Upload("u1"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Upload after delete = %v, want ErrNotFound", err)
	}
}
