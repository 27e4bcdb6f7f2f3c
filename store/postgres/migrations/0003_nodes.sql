-- Version 3: node heartbeats. Each node upserts its row every few seconds
-- (Heartbeat); last_seen_ns is on the database's clock, so nodes' clocks
-- need not agree.

CREATE TABLE nodes (
    id            text COLLATE "C" PRIMARY KEY,
    advertise_url text NOT NULL DEFAULT '',
    last_seen_ns  bigint NOT NULL,
    live_capacity integer NOT NULL,
    live_free     integer NOT NULL,
    running_jobs  integer NOT NULL
);
