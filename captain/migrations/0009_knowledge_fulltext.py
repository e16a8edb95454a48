"""Full-text index over knowledge chunks' keyword text (`search_text`: words and CJK bigrams) for the keyword side
of hybrid search: an FTS5 table kept in step by triggers on SQLite, a GIN index on PostgreSQL."""

from django.db import migrations

SQLITE_FORWARD = [
    "CREATE VIRTUAL TABLE captain_knowledgechunk_fts USING fts5("
    "search_text, content='captain_knowledgechunk', content_rowid='id')",
    "CREATE TRIGGER captain_knowledgechunk_fts_ai AFTER INSERT ON captain_knowledgechunk BEGIN "
    "INSERT INTO captain_knowledgechunk_fts(rowid, search_text) VALUES (new.id, new.search_text); END",
    "CREATE TRIGGER captain_knowledgechunk_fts_ad AFTER DELETE ON captain_knowledgechunk BEGIN "
    "INSERT INTO captain_knowledgechunk_fts(captain_knowledgechunk_fts, rowid, search_text) "
    "VALUES ('delete', old.id, old.search_text); END",
    "CREATE TRIGGER captain_knowledgechunk_fts_au AFTER UPDATE ON captain_knowledgechunk BEGIN "
    "INSERT INTO captain_knowledgechunk_fts(captain_knowledgechunk_fts, rowid, search_text) "
    "VALUES ('delete', old.id, old.search_text); "
    "INSERT INTO captain_knowledgechunk_fts(rowid, search_text) VALUES (new.id, new.search_text); END",
]
SQLITE_BACKWARD = [
    "DROP TRIGGER IF EXISTS captain_knowledgechunk_fts_au",
    "DROP TRIGGER IF EXISTS captain_knowledgechunk_fts_ad",
    "DROP TRIGGER IF EXISTS captain_knowledgechunk_fts_ai",
    "DROP TABLE IF EXISTS captain_knowledgechunk_fts",
]
POSTGRES_FORWARD = [
    "CREATE INDEX captain_knowledgechunk_fts_idx ON captain_knowledgechunk "
    "USING GIN (to_tsvector('simple', search_text))",
]
POSTGRES_BACKWARD = ["DROP INDEX IF EXISTS captain_knowledgechunk_fts_idx"]


def _run(statements: dict[str, list[str]]):
    def apply(apps, schema_editor):
        for sql in statements.get(schema_editor.connection.vendor, []):
            schema_editor.execute(sql)

    return apply


class Migration(migrations.Migration):
    dependencies = [("captain", "0008_knowledge")]

    operations = [
        migrations.RunPython(
            _run({"sqlite": SQLITE_FORWARD, "postgresql": POSTGRES_FORWARD}),
            _run({"sqlite": SQLITE_BACKWARD, "postgresql": POSTGRES_BACKWARD}),
        )
    ]
