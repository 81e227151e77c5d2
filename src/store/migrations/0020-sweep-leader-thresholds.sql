-- 0020: the thresholds the sweep leader judges with (src/store/nodes/sweep-leader.ts), written with every claim
-- and renewal of the lease. `fleetkit sweep` by hand reads them, so it judges silence as the gateways do
-- instead of by its own environment (a manual sweep with the defaults, 300 s, made nodes lost that a gateway
-- set to 3600 s would have left alone). Null in a row no gateway of this version wrote yet.
ALTER TABLE sweep_leader
  ADD COLUMN unhealthy_after_seconds integer CHECK (unhealthy_after_seconds >= 5),
  ADD COLUMN lost_after_seconds integer CHECK (lost_after_seconds >= 30),
  ADD CONSTRAINT sweep_leader_thresholds_whole
    CHECK ((unhealthy_after_seconds IS NULL) = (lost_after_seconds IS NULL) AND lost_after_seconds > unhealthy_after_seconds);
