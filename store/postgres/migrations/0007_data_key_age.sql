-- Version 7: when each data key was made, by the database's clock.
--
-- A node's sweep of data keys whose job, upload or blob is gone
-- (store/sealed: at start, and after a retention expiry) must not destroy
-- the key of a blob another node is still writing: the blob is named only
-- when its write commits, and its key is made when the write begins. The
-- sweep takes only keys older than the store's sweep_after
-- (Keyring.SweepableIDs), as SweepBlobs does for blobs. The default is the
-- database's own clock, so a key any build inserts gets its time and the
-- nodes' clocks do not enter; keys made before this version count from
-- the migration.

ALTER TABLE data_keys ADD COLUMN created_ns bigint NOT NULL
    DEFAULT (extract(epoch from clock_timestamp()) * 1000000000)::bigint;
