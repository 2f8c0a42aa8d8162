-- The owners CODEOWNERS gives a tracking issue's test(s), as last written on the issue: the
-- dashboard shows and filters by them without reading GitHub.
ALTER TABLE tracking_issues ADD COLUMN owners jsonb NOT NULL DEFAULT '[]'::jsonb;
