"""Full-text index over message text for the dashboard's search: on SQLite an FTS5 table with the trigram
tokenizer (any substring of three characters or more, Chinese included, case-insensitive) kept in step by
triggers, on PostgreSQL a GIN index over the `simple` text-search vector and a trigram GIN index for text that
has no word boundaries (Chinese). Existing messages are indexed by the migration."""

from django.db import migrations

SQLITE_FORWARD = [
    "CREATE VIRTUAL TABLE helpdesk_message_fts USING fts5("
    "content, content='helpdesk_message', content_rowid='id', tokenize='trigram')",
    "INSERT INTO helpdesk_message_fts(helpdesk_message_fts) VALUES ('rebuild')",
    "CREATE TRIGGER helpdesk_message_fts_ai AFTER INSERT ON helpdesk_message BEGIN "
    "INSERT INTO helpdesk_message_fts(rowid, content) VALUES (new.id, new.content); END",
    "CREATE TRIGGER helpdesk_message_fts_ad AFTER DELETE ON helpdesk_message BEGIN "
    "INSERT INTO helpdesk_message_fts(helpdesk_message_fts, rowid, content) "
    "VALUES ('delete', old.id, old.content); END",
    "CREATE TRIGGER helpdesk_message_fts_au AFTER UPDATE OF content ON helpdesk_message BEGIN "
    "INSERT INTO helpdesk_message_fts(helpdesk_message_fts, rowid, content) "
    "VALUES ('delete', old.id, old.content); "
    "INSERT INTO helpdesk_message_fts(rowid, content) VALUES (new.id, new.content); END",
]
SQLITE_BACKWARD = [
    "DROP TRIGGER IF EXISTS helpdesk_message_fts_au",
    "DROP TRIGGER IF EXISTS helpdesk_message_fts_ad",
    "DROP TRIGGER IF EXISTS helpdesk_message_fts_ai",
    "DROP TABLE IF EXISTS helpdesk_message_fts",
]
POSTGRES_FORWARD = [
    "CREATE INDEX helpdesk_message_fts_idx ON helpdesk_message "
    "USING GIN (to_tsvector('simple'::regconfig, content))",
]
POSTGRES_BACKWARD = ["DROP INDEX IF EXISTS helpdesk_message_fts_idx"]


def _run(statements: dict[str, list[str]]):
    def apply(apps, schema_editor):
        for sql in statements.get(schema_editor.connection.vendor, []):
            schema_editor.execute(sql)

    return apply


class Migration(migrations.Migration):
    dependencies = [("helpdesk", "0017_person_language_inbox_language")]

    operations = [
        migrations.RunPython(
            _run({"sqlite": SQLITE_FORWARD, "postgresql": POSTGRES_FORWARD}),
            _run({"sqlite": SQLITE_BACKWARD, "postgresql": POSTGRES_BACKWARD}),
        )
    ]
