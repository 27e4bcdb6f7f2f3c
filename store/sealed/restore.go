package sealed

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/earshot-dev/earshot/store"
)

// ErrRestoreKeys is returned by RestoreKeys when the merged keyring would
// hold data keys under key-encryption keys the data dir does not use, and
// no key was given to re-wrap them.
var ErrRestoreKeys = errors.New("sealed: restored data keys need another key")

// restoreSuffix names the merged keyring RestoreKeys prepares beside the
// live one.
const restoreSuffix = ".restore"

// RestoreKeys prepares the keyring of data dir dir for the restore of a
// backup whose wrapped data keys are in the file backupKeys (a backup's
// FILE+KeysSuffix): every entry of backupKeys, and every entry of dir's
// current keyring (if any) that backupKeys lacks (a blob written since the
// backup is still on disk; a job created since keeps its key, so the
// database the restore sets aside stays readable). For an id in both, the
// current entry wins for a blob (it sealed the file on disk), the
// backup's for a record. The data dir's file is not touched: the merge is
// written beside it and CommitRestoredKeys puts it in place (after the
// database's swap); DiscardRestoredKeys drops it.
//
// With keys, every merged data key is re-wrapped under keys[0] (each
// unwrapped with whichever of keys wrapped it; one wrapped by none is
// store.ErrKeyMissing) and no rotation is recorded. Without keys the
// entries keep their wraps, and the restore is refused (ErrRestoreKeys,
// naming the key ids) when they would be under a key the data dir does not
// already use: a backup from before a rotation. It returns the ids of the
// keys the restored keyring needs.
func RestoreKeys(dir, backupKeys string, keys []*KEK) ([]string, error) {
	back, backRot, err := readKeyring(backupKeys)
	if err != nil {
		return nil, fmt.Errorf("sealed: restore keys %s: %w", backupKeys, err)
	}
	live := filepath.Join(dir, KeyringFile)
	cur, curRot, err := readKeyring(live)
	fresh := errors.Is(err, os.ErrNotExist)
	if err != nil && !fresh {
		return nil, fmt.Errorf("sealed: restore keys: %s: %w", live, err)
	}
	merged := map[string]Entry{}
	for id, e := range cur {
		merged[id] = e
	}
	for id, e := range back {
		if _, had := cur[id]; had && strings.HasPrefix(id, "b:") {
			continue
		}
		merged[id] = e
	}
	rot := curRot
	allowed := keksOf(cur, curRot)
	if fresh || len(cur) == 0 {
		rot = backRot
		allowed = keksOf(back, backRot)
	}
	if len(keys) > 0 {
		byID := map[string]*KEK{}
		for _, k := range keys {
			byID[k.ID()] = k
		}
		for id, e := range merged {
			k := byID[e.KEK]
			if k == nil {
				return nil, fmt.Errorf("sealed: restore keys: data key of %s is under key %s, not given: %w", id, e.KEK, store.ErrKeyMissing)
			}
			raw, err := k.unwrap(id, e.Wrapped)
			if err != nil {
				return nil, fmt.Errorf("sealed: restore keys: %w", err)
			}
			merged[id] = Entry{KEK: keys[0].ID(), Wrapped: keys[0].wrap(id, raw)}
			clear(raw)
		}
		rot = nil
	} else {
		var foreign []string
		for _, id := range slices.Sorted(mapKeys(keksOf(merged, nil))) {
			if !allowed[id] {
				foreign = append(foreign, id)
			}
		}
		if len(foreign) > 0 {
			return nil, fmt.Errorf("sealed: restore keys: the backup's data keys are under key %s, %s uses key %s; give every key file (--key-file, the current first) to re-wrap them: %w",
				strings.Join(foreign, ", "), dir, strings.Join(slices.Sorted(mapKeys(allowed)), ", "), ErrRestoreKeys)
		}
	}
	tmp := live + restoreSuffix
	os.Remove(tmp)
	k, err := OpenFileKeyring(tmp, true)
	if err != nil {
		return nil, err
	}
	for _, id := range slices.Sorted(mapKeys(merged)) {
		if err := k.Put(id, merged[id]); err != nil {
			k.Close()
			os.Remove(tmp)
			return nil, err
		}
	}
	err = k.SetRotation(rot)
	if err == nil {
		err = k.f.Sync()
	}
	if cerr := k.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp)
		return nil, fmt.Errorf("sealed: restore keys: %w", noSpace(err))
	}
	return slices.Sorted(mapKeys(keksOf(merged, rot))), nil
}

// CommitRestoredKeys puts the keyring RestoreKeys prepared in dir in place
// of the live one (a rename, then the directory synced).
func CommitRestoredKeys(dir string) error {
	live := filepath.Join(dir, KeyringFile)
	if err := os.Rename(live+restoreSuffix, live); err != nil {
		return fmt.Errorf("sealed: restore keys: %w", err)
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// DiscardRestoredKeys removes the keyring RestoreKeys prepared in dir.
func DiscardRestoredKeys(dir string) {
	os.Remove(filepath.Join(dir, KeyringFile+restoreSuffix))
}

// keksOf returns the ids of the keys wrapping entries, and rot's two.
func keksOf(entries map[string]Entry, rot *Rotation) map[string]bool {
	out := map[string]bool{}
	for _, e := range entries {
		out[e.KEK] = true
	}
	if rot != nil {
		out[rot.From], out[rot.To] = true, true
	}
	return out
}

// readKeyring reads a keyring file's entries and rotation without writing
// to it (a torn slot is skipped; of an id's two slots, the later wins, or
// the one under the rotation's new key).
func readKeyring(path string) (map[string]Entry, *Rotation, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	buf := make([]byte, slotSize)
	if _, err := io.ReadFull(f, buf); err != nil {
		return nil, nil, fmt.Errorf("header: %w", errIntegrity)
	}
	rot, err := parseHeader(buf)
	if err != nil {
		return nil, nil, err
	}
	out := map[string]Entry{}
	for {
		if _, err := io.ReadFull(f, buf); err != nil {
			break
		}
		id, e, ok := decodeSlot(buf)
		if !ok {
			continue
		}
		if old, dup := out[id]; dup && rot != nil && old.KEK == rot.To && e.KEK != rot.To {
			continue
		}
		out[id] = e
	}
	return out, rot, nil
}

// parseHeader checks a keyring header's magic and returns the rotation it
// records (nil when none, or when the header's checksum fails: a torn
// header loses only its rotation).
func parseHeader(buf []byte) (*Rotation, error) {
	if !bytes.Equal(buf[:len(keyringMagic)], keyringMagic) {
		return nil, fmt.Errorf("not an earshot keyring: %w", errIntegrity)
	}
	if crc32.ChecksumIEEE(buf[:slotSize-4]) != binary.BigEndian.Uint32(buf[slotSize-4:]) {
		return nil, nil
	}
	var h struct {
		Rotation *Rotation `json:"rotation"`
	}
	if json.Unmarshal(bytes.TrimRight(buf[len(keyringMagic):slotSize-4], "\x00"), &h) != nil {
		return nil, nil
	}
	return h.Rotation, nil
}
