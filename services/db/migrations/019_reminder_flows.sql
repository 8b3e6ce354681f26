-- Reminder flows (docs/reminder-flows.md): numbered versions of a flow
-- key per organisation, each with its graph of dunning steps (validated by the service, stored with its defaults
-- filled in), its state and who created, approved and activated it. The states and their transitions are
-- services/reminder-flows/flow-lifecycle.ts.
CREATE TABLE reminder_flow_versions (
  organization_id    uuid NOT NULL REFERENCES organizations (id),
  id                 uuid NOT NULL,
  flow_key           text NOT NULL CHECK (flow_key ~ '^[A-Z0-9_]{3,60}$'),
  version            integer NOT NULL CHECK (version >= 1),
  name               text NOT NULL CHECK (length(name) BETWEEN 1 AND 120),
  graph              jsonb NOT NULL,
  state              text NOT NULL DEFAULT 'draft' CHECK (state IN ('draft', 'approved', 'active', 'inactive')),
  -- Who: an API key (its id) or, later, a member of the organisation.
  created_by_type    text NOT NULL CHECK (created_by_type IN ('api_key', 'member')),
  created_by_id      uuid NOT NULL,
  approved_by_type   text CHECK (approved_by_type IN ('api_key', 'member')),
  approved_by_id     uuid,
  activated_by_type  text CHECK (activated_by_type IN ('api_key', 'member')),
  activated_by_id    uuid,
  created_at         timestamptz NOT NULL DEFAULT now(),
  approved_at        timestamptz,
  activated_at       timestamptz,
  PRIMARY KEY (organization_id, id),
  UNIQUE (organization_id, flow_key, version),
  -- Four-eyes: an approved version names its approver, who is not its creator.
  CHECK ((state = 'draft') = (approved_at IS NULL)),
  CHECK ((approved_at IS NULL) = (approved_by_id IS NULL) AND (approved_by_id IS NULL) = (approved_by_type IS NULL)),
  CHECK (approved_by_id IS NULL OR approved_by_type <> created_by_type OR approved_by_id <> created_by_id),
  CHECK ((activated_at IS NULL) = (activated_by_id IS NULL) AND (activated_by_id IS NULL) = (activated_by_type IS NULL)),
  CHECK (state NOT IN ('active', 'inactive') OR activated_at IS NOT NULL)
);
-- One active version per organisation, of any key.
CREATE UNIQUE INDEX reminder_flow_versions_one_active ON reminder_flow_versions (organization_id) WHERE state = 'active';

-- Pinning: an invoice's dunning follows the flow version that was active when it was issued (null: none was, and
-- the reminder settings apply). Set once, by the trigger below, as the invoice becomes issued; a later activation
-- does not move it.
ALTER TABLE invoices ADD COLUMN reminder_flow_version_id uuid;
ALTER TABLE invoices ADD CONSTRAINT invoices_reminder_flow_version
  FOREIGN KEY (organization_id, reminder_flow_version_id) REFERENCES reminder_flow_versions (organization_id, id);

CREATE FUNCTION invoices_pin_reminder_flow() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.reminder_flow_version_id := (
    SELECT id FROM reminder_flow_versions WHERE organization_id = NEW.organization_id AND state = 'active');
  RETURN NEW;
END $$;

-- Issuing finishes with the guarded update issuing → issued (finish-issue.ts); credit notes are inserted issued and
-- have no dunning.
CREATE TRIGGER invoices_pin_reminder_flow BEFORE UPDATE OF status ON invoices
  FOR EACH ROW WHEN (OLD.status = 'issuing' AND NEW.status = 'issued' AND NEW.type = 'invoice')
  EXECUTE FUNCTION invoices_pin_reminder_flow();
