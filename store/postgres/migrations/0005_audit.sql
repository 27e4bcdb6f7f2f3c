-- Version 4: the audit trail and legal holds.
--
-- audit holds one row per entry, seq from 1 with no gap; audit_chain's one
-- row is the chain's head (the last entry appended) and its anchor (the
-- last entry expired). Every append locks that row (SELECT ... FOR UPDATE),
-- so appends from every node are serialised and the nodes keep one chain.
-- jobs.held mirrors the head's held_at (store.Job.Held) for retention's
-- query and DeleteJob.

CREATE TABLE audit (
    seq      bigint PRIMARY KEY,
    at_ns    bigint NOT NULL,
    key_id   text COLLATE "C" NOT NULL DEFAULT '',
    account  text COLLATE "C" NOT NULL DEFAULT '',
    source   text COLLATE "C" NOT NULL DEFAULT '',
    action   text COLLATE "C" NOT NULL,
    object   text COLLATE "C" NOT NULL DEFAULT '',
    status   integer NOT NULL DEFAULT 0,
    prev     bytea NOT NULL,
    hash     bytea NOT NULL
);
CREATE INDEX audit_at ON audit (at_ns);
CREATE INDEX audit_account ON audit (account, seq);
CREATE INDEX audit_object ON audit (object, seq);

CREATE TABLE audit_chain (
    id          integer PRIMARY KEY CHECK (id = 1),
    head_seq    bigint NOT NULL,
    head_hash   bytea NOT NULL,
    anchor_seq  bigint NOT NULL,
    anchor_hash bytea NOT NULL
);
INSERT INTO audit_chain VALUES (1, 0, '', 0, '');

ALTER TABLE jobs ADD COLUMN held boolean NOT NULL DEFAULT false;
