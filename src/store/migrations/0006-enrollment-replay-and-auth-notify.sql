-- 0006: (1) an agent certificate keeps its PEM and the SHA-256 of its public key, so a repeated
-- enrollment (same secret, same key, the answer lost when a gateway died after the commit) gets
-- the certificate already issued instead of stranding the node. Certificates are public.
-- (2) Every gateway caches certificate rows for long; a revocation or a node status change is
-- announced on channel fleetkit_auth (payload: the node id) so each drops the node's rows at once.

ALTER TABLE node_certificates ADD COLUMN certificate_pem text;
ALTER TABLE node_certificates ADD COLUMN public_key_sha256 bytea CHECK (public_key_sha256 IS NULL OR octet_length(public_key_sha256) = 32);

CREATE FUNCTION fleetkit_notify_auth_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_TABLE_NAME = 'nodes' THEN
    PERFORM pg_notify('fleetkit_auth', COALESCE(NEW.id, OLD.id));
  ELSE
    PERFORM pg_notify('fleetkit_auth', COALESCE(NEW.node_id, OLD.node_id));
  END IF;
  RETURN NULL;
END;
$$;

CREATE TRIGGER node_certificates_auth_notify
  AFTER UPDATE OF revoked_at ON node_certificates
  FOR EACH ROW WHEN (OLD.revoked_at IS DISTINCT FROM NEW.revoked_at)
  EXECUTE FUNCTION fleetkit_notify_auth_change();

CREATE TRIGGER nodes_auth_notify
  AFTER UPDATE OF status ON nodes
  FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status)
  EXECUTE FUNCTION fleetkit_notify_auth_change();

CREATE TRIGGER nodes_auth_notify_delete
  AFTER DELETE ON nodes
  FOR EACH ROW
  EXECUTE FUNCTION fleetkit_notify_auth_change();
