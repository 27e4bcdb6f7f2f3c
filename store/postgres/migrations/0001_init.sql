-- Version 1: everything the embedded store keeps, as tables. Text keys sort
-- byte-wise (COLLATE "C"), as the embedded store's keys do; times are Unix
-- nanoseconds (bigint), so they round-trip exactly and sort like the
-- embedded store's index keys. Records keep the store's JSON (bytea) beside
-- the columns that queries filter and sort on.

CREATE TABLE keys (
    id         text COLLATE "C" PRIMARY KEY,
    account    text COLLATE "C" NOT NULL,
    prefix     text NOT NULL,
    created_ns bigint NOT NULL,
    revoked_ns bigint NOT NULL DEFAULT 0, -- 0 while active
    hash       bytea NOT NULL UNIQUE      -- sha256 of the secret
);

CREATE TABLE callback_secrets (
    account text COLLATE "C" PRIMARY KEY,
    secret  bytea NOT NULL
);

CREATE TABLE jobs (
    id          text COLLATE "C" PRIMARY KEY,
    account     text COLLATE "C" NOT NULL,
    kind        text COLLATE "C" NOT NULL,
    status      text COLLATE "C" NOT NULL,
    created_ns  bigint NOT NULL,
    queued      boolean NOT NULL,               -- store.Job.InQueue()
    awaiting    boolean NOT NULL,               -- AwaitingAudio
    blob        text COLLATE "C" NOT NULL DEFAULT '',
    node        text COLLATE "C" NOT NULL DEFAULT '', -- live: the node that runs it; pre-recorded: the node that claimed it
    lease_ns    bigint NOT NULL DEFAULT 0,      -- claim lease end (processing pre-recorded jobs)
    head        bytea NOT NULL,                 -- the Job's JSON without params and result
    params      bytea,
    result      bytea
);
CREATE INDEX jobs_list ON jobs (account, kind, created_ns DESC, id DESC);
CREATE INDEX jobs_status ON jobs (kind, status, created_ns, id);
CREATE INDEX jobs_queue ON jobs (kind, created_ns, id) WHERE queued;
CREATE INDEX jobs_blob ON jobs (blob) WHERE blob <> '';

CREATE TABLE uploads (
    id         text COLLATE "C" PRIMARY KEY,
    account    text COLLATE "C" NOT NULL,
    created_ns bigint NOT NULL,
    blob       text COLLATE "C" NOT NULL DEFAULT '',
    record     bytea NOT NULL
);
CREATE INDEX uploads_created ON uploads (created_ns, id);
CREATE INDEX uploads_account ON uploads (account);

CREATE TABLE deliveries (
    id       text COLLATE "C" PRIMARY KEY,
    job_id   text COLLATE "C" NOT NULL DEFAULT '',
    next_ns  bigint NOT NULL,                 -- NextAttempt; the minimum bigint when due now
    lease_ns bigint NOT NULL,                 -- claimed (ClaimDeliveries) until; the minimum bigint when free
    node     text COLLATE "C" NOT NULL DEFAULT '',
    record   bytea NOT NULL
);
CREATE INDEX deliveries_due ON deliveries (next_ns, id);
CREATE INDEX deliveries_job ON deliveries (job_id) WHERE job_id <> '';

-- Audio: a name points at a content, a content is a run of chunks. Two
-- names may share a content (LinkBlob), as hard links share an inode; a
-- content goes with its last name.
CREATE TABLE blob_contents (
    id         bigserial PRIMARY KEY,
    size       bigint NOT NULL,
    created_ns bigint NOT NULL
);
CREATE TABLE blob_chunks (
    content_id bigint NOT NULL REFERENCES blob_contents ON DELETE CASCADE,
    seq        integer NOT NULL,
    data       bytea NOT NULL,
    PRIMARY KEY (content_id, seq)
);
CREATE TABLE blobs (
    name       text COLLATE "C" PRIMARY KEY,
    content_id bigint NOT NULL REFERENCES blob_contents,
    created_ns bigint NOT NULL
);
CREATE INDEX blobs_content ON blobs (content_id);
ALTER TABLE blob_chunks ALTER COLUMN data SET STORAGE EXTERNAL; -- audio does not compress
