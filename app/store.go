package app

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/earshot-dev/earshot/daemon"
	"github.com/earshot-dev/earshot/store"
	"github.com/earshot-dev/earshot/store/bolt"
	"github.com/earshot-dev/earshot/store/postgres"
	"github.com/earshot-dev/earshot/store/sealed"
)

// OpenStore opens the store cfg names: the embedded bbolt store in
// cfg.DataDir, or the PostgreSQL store at cfg.Store.DSN as node
// cfg.Cluster.NodeID (migrating its schema; a newer schema is
// store.ErrSchemaTooNew), either sealed (store/sealed) when a data key is
// configured (DataKeyFile): bbolt's data keys in data_dir/keyring,
// PostgreSQL's in its table data_keys (postgres.Keyring). cfg must have passed Validate. bbolt o is passed
// to bolt.Open (nil for the daemon's defaults).
func OpenStore(ctx context.Context, cfg daemon.Config, o *bolt.Options) (store.Store, error) {
	switch cfg.Store.Backend {
	case daemon.BackendPostgres:
		// data_dir still holds the admin socket and live recordings.
		if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
			return nil, fmt.Errorf("data dir: %w", err)
		}
		db, err := postgres.Open(ctx, string(cfg.Store.DSN), &postgres.Options{NodeID: cfg.Cluster.NodeID, JobLease: cfg.Cluster.JobLease})
		if err != nil {
			return nil, fmt.Errorf("open postgres store: %w", err)
		}
		s, err := sealShared(db, cfg)
		if err != nil {
			db.Close()
			return nil, err
		}
		return s, nil
	default:
		db, err := bolt.Open(cfg.DataDir, o)
		if err != nil {
			return nil, fmt.Errorf("open store in %s: %w", cfg.DataDir, err)
		}
		s, err := seal(db, cfg, o != nil && o.NoSync)
		if err != nil {
			db.Close()
			return nil, err
		}
		return s, nil
	}
}

// CredentialName is the systemd credential that holds the data key when
// store.encryption_key_file is not set (LoadCredential= or
// LoadCredentialEncrypted= in the unit).
const CredentialName = "earshot-data-key"

// DataKeyFile returns the key-encryption key's file: store.encryption_key_file,
// else the systemd credential CredentialName when the service manager
// passed one ($CREDENTIALS_DIRECTORY), else "" (encryption off).
func DataKeyFile(cfg daemon.Config) string {
	if cfg.Store.EncryptionKeyFile != "" {
		return cfg.Store.EncryptionKeyFile
	}
	if dir := os.Getenv("CREDENTIALS_DIRECTORY"); dir != "" {
		p := filepath.Join(dir, CredentialName)
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return ""
}

// seal wraps db in the sealing layer when a data key is configured. A data
// dir that was sealed (its keyring exists) and no key is
// store.ErrKeyMissing, naming the setting.
func seal(db store.Store, cfg daemon.Config, noSync bool) (store.Store, error) {
	path := DataKeyFile(cfg)
	if path == "" {
		if sealed.Exists(cfg.DataDir) {
			return nil, fmt.Errorf("data dir %s is encrypted (%s) but no data key is configured: set store.encryption_key_file or the systemd credential %s: %w",
				cfg.DataDir, sealed.KeyringFile, CredentialName, store.ErrKeyMissing)
		}
		return db, nil
	}
	kek, err := sealed.LoadKeyFile(path)
	if err != nil {
		return nil, fmt.Errorf("store.encryption_key_file: %w", err)
	}
	ring, err := sealed.OpenFileKeyring(filepath.Join(cfg.DataDir, sealed.KeyringFile), noSync)
	if err != nil {
		return nil, err
	}
	s, err := sealed.Open(db, sealed.Options{Keys: []*sealed.KEK{kek}, Keyring: ring})
	if err != nil {
		ring.Close()
		return nil, err
	}
	return s, nil
}

// sealShared wraps the PostgreSQL store db in the sealing layer when a
// data key is configured, its data keys in the database (every node of
// the cluster opens what any sealed). A database that holds data keys and
// no key configured is store.ErrKeyMissing, naming the setting.
func sealShared(db *postgres.DB, cfg daemon.Config) (store.Store, error) {
	ring := db.Keyring()
	path := DataKeyFile(cfg)
	if path == "" {
		sealedDB, err := ring.HasKeys()
		if err != nil {
			return nil, err
		}
		if sealedDB {
			return nil, fmt.Errorf("the PostgreSQL store is encrypted (table data_keys) but no data key is configured: set store.encryption_key_file or the systemd credential %s (the same key as the other nodes): %w",
				CredentialName, store.ErrKeyMissing)
		}
		return db, nil
	}
	kek, err := sealed.LoadKeyFile(path)
	if err != nil {
		return nil, fmt.Errorf("store.encryption_key_file: %w", err)
	}
	return sealed.Open(db, sealed.Options{Keys: []*sealed.KEK{kek}, Keyring: ring})
}
