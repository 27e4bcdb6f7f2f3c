-- Version 2: a live job's batch pass (store.Job.BatchPass) as a column, so
-- that ClaimBatchPass finds the queued ones through the queue index and
-- leases cover the running ones as they cover claimed pre-recorded jobs.

ALTER TABLE jobs ADD COLUMN batch_pass text COLLATE "C" NOT NULL DEFAULT '';
UPDATE jobs SET batch_pass = convert_from(head, 'UTF8')::jsonb->>'batch_pass'
    WHERE kind = 'live' AND convert_from(head, 'UTF8')::jsonb ? 'batch_pass';
