-- 0004: a reissued enrollment secret. `fleetkit seed --reissue` / `node token --reissue` give an
-- enrolled node a new secret without making it provisioning, so its agent keeps authenticating
-- with its current certificate until the new secret is used (that enrollment revokes it).

ALTER TABLE nodes ADD COLUMN enrollment_secret_reissued boolean NOT NULL DEFAULT false;
