-- Version 6: the shared keyring of encryption at rest (store/sealed).
--
-- data_keys holds one row per data key (a job's, an upload's, a blob's, a
-- delivery's), wrapped by the key-encryption key kek (its KeyID): never a
-- clear key. Deleting a record deletes its row (crypto-shredding; what
-- PostgreSQL keeps of a deleted row is in docs/deployment.md). The table
-- is kept small (about 100 bytes a row) and vacuumed after deletions, so
-- its dead rows go soon.
--
-- data_key_rotation's one row, when present, is the rotation in progress:
-- every row is being re-wrapped from from_kek to to_kek (their files on
-- the nodes at from_file and to_file). One rotation at a time for the
-- whole cluster; a node that restarts resumes it.

CREATE TABLE data_keys (
    id       text COLLATE "C" PRIMARY KEY,
    kek      text COLLATE "C" NOT NULL,
    wrapped  bytea NOT NULL
) WITH (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 50);

CREATE TABLE data_key_rotation (
    id         integer PRIMARY KEY CHECK (id = 1),
    from_kek   text COLLATE "C" NOT NULL,
    from_file  text NOT NULL DEFAULT '',
    to_kek     text COLLATE "C" NOT NULL,
    to_file    text NOT NULL DEFAULT ''
);
