-- Version 4: scoped keys that expire (issue 40). scopes NULL holds every
-- scope, as keys made before this version do; expires_ns 0 never expires.

ALTER TABLE keys ADD COLUMN scopes text[];
ALTER TABLE keys ADD COLUMN expires_ns bigint NOT NULL DEFAULT 0;
