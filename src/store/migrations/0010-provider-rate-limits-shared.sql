-- 0010: 0001's provider_rate_limits, made fit to share the budget between processes
-- (src/store/provider-rate-limits.ts). The budget refills continuously, so what is left is a
-- fraction between requests; after a 429 nobody sends before blocked_until. updated_at is when
-- remaining was true, on the clock of the process that wrote it. project_key names a token by a
-- digest prefix, never the token.
ALTER TABLE provider_rate_limits ALTER COLUMN remaining TYPE double precision;
ALTER TABLE provider_rate_limits ADD COLUMN blocked_until timestamptz;
ALTER TABLE provider_rate_limits
  ADD CONSTRAINT provider_rate_limits_project_key_digest CHECK (project_key ~ '^[0-9a-f]{16}$'),
  ADD CONSTRAINT provider_rate_limits_limit_positive CHECK (request_limit IS NULL OR request_limit > 0),
  ADD CONSTRAINT provider_rate_limits_remaining_not_negative CHECK (remaining IS NULL OR remaining >= 0);
