-- 0012: a node's Hetzner Cloud volume (`fleetkit node provision --volume SIZE`, src/store/provider-volumes.ts).
-- volume_state: planned (asked for; nothing sent), requested (the create is committed before it is sent,
-- so a lost answer is looked up by the fleetkit.node_id label), created (its id and linux_device known),
-- attached (to the node's server), detached (by node decommission, kept), deleted (node decommission
-- --delete-volume). Its linux_device is the device the data_volume role formats and mounts.
ALTER TABLE nodes ADD COLUMN volume_size_gb integer CHECK (volume_size_gb BETWEEN 10 AND 10240);
ALTER TABLE nodes ADD COLUMN volume_state text
  CHECK (volume_state IN ('planned', 'requested', 'created', 'attached', 'detached', 'deleted'));
ALTER TABLE nodes ADD COLUMN provider_volume_id text;
ALTER TABLE nodes ADD COLUMN volume_linux_device text;
ALTER TABLE nodes ADD CONSTRAINT nodes_volume_state_sized CHECK ((volume_state IS NULL) = (volume_size_gb IS NULL));
ALTER TABLE nodes ADD CONSTRAINT nodes_volume_id_known
  CHECK (volume_state IS NULL OR volume_state IN ('planned', 'requested') OR provider_volume_id IS NOT NULL);
