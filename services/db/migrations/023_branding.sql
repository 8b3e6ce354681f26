-- Branding (docs/api-conventions.md, "Branding"): the organisation's logos. An image is stored once per organisation by
-- its SHA-256 (write-once, like documents), and each variant points at its current image. A document records the
-- image it was rendered with, so replacing or deleting a logo never changes what an issued document shows.
CREATE TABLE branding_images (
  organization_id uuid NOT NULL REFERENCES organizations (id),
  sha256          text NOT NULL CHECK (sha256 ~ '^[0-9a-f]{64}$'),
  mime            text NOT NULL CHECK (mime IN ('image/png', 'image/jpeg', 'image/svg+xml', 'image/webp')),
  content         bytea NOT NULL,
  width           integer NOT NULL CHECK (width BETWEEN 1 AND 4000),
  height          integer NOT NULL CHECK (height BETWEEN 1 AND 4000),
  created_at      timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (organization_id, sha256)
);

CREATE TABLE branding_logos (
  organization_id uuid NOT NULL REFERENCES organizations (id),
  variant         text NOT NULL CHECK (variant IN ('light', 'dark')),
  sha256          text NOT NULL,
  updated_at      timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (organization_id, variant),
  FOREIGN KEY (organization_id, sha256) REFERENCES branding_images (organization_id, sha256)
);

CREATE FUNCTION branding_images_write_once() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'branding images are write-once' USING ERRCODE = 'restrict_violation';
END $$;

CREATE TRIGGER branding_images_no_update BEFORE UPDATE ON branding_images
  FOR EACH ROW EXECUTE FUNCTION branding_images_write_once();
