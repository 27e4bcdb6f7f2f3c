package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/earshot-dev/earshot/store/bolt"
	"github.com/earshot-dev/earshot/store/sealed"

	"github.com/earshot-dev/earshot/admin"
	"github.com/earshot-dev/earshot/store"
)

// parseDataDirFile parses `--data-dir DIR FILE` for backup and restore;
// with keyFiles, also the repeatable `--key-file` of restore.
func parseDataDirFile(name string, args []string, stderr io.Writer, keyFiles *keyFileFlags) (dataDir, file string, err error) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("data-dir", "/var/lib/earshot", "data directory")
	if keyFiles != nil {
		fs.Var(keyFiles, "key-file", "a key-encryption key `FILE` (repeatable, the current first): re-wraps the restored data keys under the first")
	}
	if err := fs.Parse(args); err != nil {
		return "", "", err
	}
	if fs.NArg() != 1 {
		fmt.Fprintf(stderr, "usage: earshotd %s --data-dir DIR FILE\n", name)
		return "", "", fmt.Errorf("%s: want one FILE, got %d arguments", name, fs.NArg())
	}
	dataDir, err = filepath.Abs(*dir)
	if err != nil {
		return "", "", err
	}
	file, err = filepath.Abs(fs.Arg(0))
	return dataDir, file, err
}

// cmdBackup writes a consistent copy of DIR/earshot.db to FILE. When the
// daemon holds the store it asks it over the admin socket to write the copy
// into DIR (the only place the sandboxed daemon may write) and then moves
// it to FILE; otherwise it opens the store itself.
func cmdBackup(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	dataDir, file, err := parseDataDirFile("backup", args, stderr, nil)
	if err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(dataDir, "earshot.db")); err != nil {
		return fmt.Errorf("backup: no database in %s: %w", dataDir, err)
	}
	db, err := bolt.Open(dataDir, &bolt.Options{Timeout: 300 * time.Millisecond})
	var n int64
	switch {
	case errors.Is(err, store.ErrLocked):
		n, err = backupThroughDaemon(ctx, dataDir, file)
	case err != nil:
		return fmt.Errorf("backup: %w", err)
	default:
		n, err = db.BackupFile(file)
		if cerr := db.Close(); err == nil {
			err = cerr
		}
		if err == nil && sealed.Exists(dataDir) {
			// No daemon runs: the keyring is still; its copy is the
			// backup's wrapped data keys (never the key-encryption key).
			err = copyFile(filepath.Join(dataDir, sealed.KeyringFile), file+sealed.KeysSuffix)
		}
	}
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	fmt.Fprintf(stdout, "%s\t%d bytes\n", file, n)
	return nil
}

// backupThroughDaemon has the running daemon write the backup to
// DIR/backup-<random>.db and moves it to file.
func backupThroughDaemon(ctx context.Context, dataDir, file string) (int64, error) {
	var b [8]byte
	rand.Read(b[:])
	tmp := filepath.Join(dataDir, "backup-"+hex.EncodeToString(b[:])+".db")
	defer os.Remove(tmp) // gone once moved
	if err := admin.CallBackup(ctx, dataDir, tmp); err != nil {
		return 0, err
	}
	st, err := os.Stat(tmp)
	if err != nil {
		return 0, err
	}
	if err := moveFile(tmp, file); err != nil {
		return 0, err
	}
	// A sealed store's daemon wrote its wrapped data keys beside it.
	if _, err := os.Stat(tmp + sealed.KeysSuffix); err == nil {
		defer os.Remove(tmp + sealed.KeysSuffix)
		if err := moveFile(tmp+sealed.KeysSuffix, file+sealed.KeysSuffix); err != nil {
			return 0, err
		}
	}
	return st.Size(), nil
}

// copyFile copies src to dst (mode 0600, synced).
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	if err == nil {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return err
}

// moveFile renames src to dst, or copies it (through a temporary file
// beside dst, fsynced, then renamed) when they are on different file
// systems.
func moveFile(src, dst string) error {
	err := os.Rename(src, dst)
	if !errors.Is(err, syscall.EXDEV) {
		return err
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.CreateTemp(filepath.Dir(dst), ".earshot-backup-*")
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	if err == nil {
		err = out.Chmod(0o600)
	}
	if err == nil {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(out.Name(), dst)
	}
	if err != nil {
		os.Remove(out.Name())
	}
	return err
}

// keyFileFlags collects restore's --key-file values.
type keyFileFlags []string

func (k *keyFileFlags) String() string { return strings.Join(*k, ",") }

func (k *keyFileFlags) Set(v string) error { *k = append(*k, v); return nil }

// cmdRestore replaces DIR/earshot.db with the backup FILE after checking
// it; the daemon must be stopped. A sealed backup's wrapped data keys
// (FILE.keys) are merged into DIR/keyring (sealed.RestoreKeys), prepared
// before the database's swap and put in place after it; --key-file re-wraps
// them under the first key given (a backup from before a rotation).
func cmdRestore(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var keyFiles keyFileFlags
	dataDir, file, err := parseDataDirFile("restore", args, stderr, &keyFiles)
	if err != nil {
		return err
	}
	if _, err := os.Stat(file); errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("restore: %w", err)
	}
	var keks []*sealed.KEK
	for _, p := range keyFiles {
		k, err := sealed.LoadKeyFile(p)
		if err != nil {
			return fmt.Errorf("restore: %w", err)
		}
		keks = append(keks, k)
	}
	keysFile := file + sealed.KeysSuffix
	var needs []string
	_, err = os.Stat(keysFile)
	withKeys := err == nil
	if withKeys {
		if err := os.MkdirAll(dataDir, 0o700); err != nil {
			return fmt.Errorf("restore: %w", err)
		}
		if needs, err = sealed.RestoreKeys(dataDir, keysFile, keks); err != nil {
			return fmt.Errorf("restore: %w", err)
		}
	} else if sealed.Exists(dataDir) {
		fmt.Fprintf(stderr, "restore: no %s beside the backup: its sealed records open only with data keys still in %s\n",
			filepath.Base(keysFile), filepath.Join(dataDir, sealed.KeyringFile))
	}
	if err := bolt.Restore(dataDir, file); err != nil {
		sealed.DiscardRestoredKeys(dataDir)
		if errors.Is(err, store.ErrLocked) {
			return fmt.Errorf("restore: the daemon is running on %s; stop it first (systemctl stop earshotd): %w", dataDir, err)
		}
		return fmt.Errorf("restore: %w", err)
	}
	if withKeys {
		if err := sealed.CommitRestoredKeys(dataDir); err != nil {
			return fmt.Errorf("restore: the database is restored but not its data keys (%s): %w", keysFile, err)
		}
	}
	old := filepath.Join(dataDir, "earshot.db"+bolt.RestoreBackupSuffix)
	if _, err := os.Stat(old); err == nil {
		fmt.Fprintf(stdout, "restored %s into %s; the previous database is %s\n", file, dataDir, old)
	} else {
		fmt.Fprintf(stdout, "restored %s into %s\n", file, dataDir)
	}
	if withKeys {
		fmt.Fprintf(stdout, "restored its data keys (%s) into %s; they open with key %s\n", filepath.Base(keysFile),
			filepath.Join(dataDir, sealed.KeyringFile), strings.Join(needs, ", "))
	}
	return nil
}
