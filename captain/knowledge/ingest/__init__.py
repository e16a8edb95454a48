"""Knowledge ingestion: bytes or URLs in, headed plain-text sections and chunks out.

No Django models and no services here: `extract` turns an upload into a `Page`, `fetch` brings pages from the web
through the outbound policy, `chunking` cuts a page into passages that keep their headings. The documents service
(captain.knowledge.services.knowledge) stores and embeds what comes out; every failure is an `IngestError` whose message is
the document's failed status.
"""
