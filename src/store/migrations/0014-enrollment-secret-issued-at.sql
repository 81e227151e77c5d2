-- 0014: when the pending enrollment secret was stored, on the database's clock. A `--reissue` replaces
-- only a secret that existed when its run started: one stored after that (by another run at once) makes
-- it NODE_CHANGED_CONCURRENTLY, so of several reissues started together one wins (src/store/enrollment-secrets.ts).
-- NULL for a secret stored before this migration: it is older than any run that reads it.

ALTER TABLE nodes ADD COLUMN enrollment_secret_issued_at timestamptz;
