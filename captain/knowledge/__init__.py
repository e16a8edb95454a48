"""What the AI knows: documents and their ingestion (`ingest`), chunks and search (`retrieval`), FAQ pairs and
their drafts, and the pages that review them."""
