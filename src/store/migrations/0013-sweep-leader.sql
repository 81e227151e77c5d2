-- 0013: the sweep leader's lease (src/store/sweep-leader.ts). One row: which gateway sweeps, and until
-- when on the DATABASE's clock. The holder renews it; another gateway takes it only once it expired (a
-- dead, frozen or cut-off leader) or was released (a clean stop). It replaces a session advisory lock,
-- which a half-open connection could hold for as long as TCP keepalive takes to notice.
CREATE TABLE sweep_leader (
  id smallint PRIMARY KEY DEFAULT 1 CHECK (id = 1),
  holder text NOT NULL CHECK (length(holder) BETWEEN 1 AND 200),
  acquired_at timestamptz NOT NULL,
  renewed_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL CHECK (expires_at > renewed_at)
);
