"""The Simplified Chinese catalog is complete and the compiled one is its current build: every message of the
dashboard is translated (none fuzzy, placeholders kept), the committed .mo says what the .po says (a fresh
machine without gettext reads it), and the .po lists every string the code marks (none missing, none stale)."""

from __future__ import annotations

import ast
import gettext
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LOCALE = ROOT / "locale"
PO = LOCALE / "zh_Hans" / "LC_MESSAGES" / "django.po"
MO = PO.with_suffix(".mo")
PLACEHOLDER = re.compile(r"%\((\w+)\)[sd]|%[sd]")
# What `manage.py makemessages` reads (the rest of the checkout is tests, benchmarks and data).
SOURCES = ("manage.py", "config", "helpdesk", "captain", "templates")


@dataclass
class Entry:
    msgid: str = ""
    msgid_plural: str | None = None
    msgstr: dict[int, str] = field(default_factory=dict)
    flags: set[str] = field(default_factory=set)
    obsolete: bool = False


def read_po(path: Path) -> list[Entry]:
    """The entries of a .po file (the format is small enough to read here; no PO library is installed)."""
    entries: list[Entry] = []
    for block in re.split(r"\n\s*\n", path.read_text(encoding="utf-8").strip()):
        entry, key = Entry(), ""
        for line in block.splitlines():
            if line.startswith("#~"):
                entry.obsolete = True
            elif line.startswith("#,"):
                entry.flags |= {flag.strip() for flag in line[2:].split(",")}
            elif line.startswith("#"):
                continue
            elif line.startswith('"'):
                append(entry, key, ast.literal_eval(line))
            else:
                key, _, text = line.partition(" ")
                append(entry, key, ast.literal_eval(text), start=True)
        entries.append(entry)
    return entries


def append(entry: Entry, key: str, text: str, *, start: bool = False) -> None:
    if key == "msgid":
        entry.msgid = text if start else entry.msgid + text
    elif key == "msgid_plural":
        entry.msgid_plural = text if start else (entry.msgid_plural or "") + text
    else:
        index = int(key[len("msgstr[") : -1]) if key.startswith("msgstr[") else 0
        entry.msgstr[index] = text if start else entry.msgstr.get(index, "") + text


def messages(path: Path) -> list[Entry]:
    return [e for e in read_po(path) if e.msgid and not e.obsolete]


def test_the_chinese_catalog_has_messages():
    assert len(messages(PO)) > 150


def test_every_message_is_translated_and_none_is_fuzzy():
    untranslated = [e.msgid for e in messages(PO) if not all(e.msgstr.values()) or not e.msgstr]
    fuzzy = [e.msgid for e in messages(PO) if "fuzzy" in e.flags]
    assert untranslated == [] and fuzzy == []
    header = next(e for e in read_po(PO) if not e.msgid)
    assert "fuzzy" not in header.flags and "Language: zh_Hans" in header.msgstr[0]


def test_every_translation_keeps_the_placeholders_of_its_message():
    for entry in messages(PO):
        wanted = sorted(PLACEHOLDER.findall(entry.msgid))
        for text in entry.msgstr.values():
            assert sorted(PLACEHOLDER.findall(text)) == wanted, entry.msgid


def test_the_translations_are_chinese_not_english_copies():
    copied = [
        e.msgid
        for e in messages(PO)
        if re.search(r"[a-z]{3}", PLACEHOLDER.sub("", e.msgid)) and e.msgstr[0] == e.msgid
    ]
    assert copied == []


@pytest.mark.skipif(shutil.which("msgfmt") is None, reason="GNU gettext's msgfmt is not installed")
def test_the_committed_mo_is_the_build_of_the_po(tmp_path):
    fresh = tmp_path / "django.mo"
    subprocess.run(["msgfmt", "--check-format", "-o", str(fresh), str(PO)], check=True)
    with fresh.open("rb") as built, MO.open("rb") as committed:
        assert gettext.GNUTranslations(committed)._catalog == gettext.GNUTranslations(built)._catalog  # type: ignore[attr-defined]


@pytest.mark.skipif(shutil.which("xgettext") is None, reason="GNU gettext's xgettext is not installed")
def test_the_po_lists_every_marked_string_and_no_stale_one(tmp_path):
    """`makemessages` on a copy of the sources: its catalog has exactly the messages of the committed one."""
    for name in SOURCES:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, tmp_path / name, ignore=shutil.ignore_patterns("__pycache__", "static"))
        else:
            shutil.copy(source, tmp_path / name)
    (tmp_path / "locale").mkdir()
    subprocess.run(
        [sys.executable, "manage.py", "makemessages", "-l", "zh_Hans", "--no-location", "--no-obsolete"],
        cwd=tmp_path,
        check=True,
        capture_output=True,
        env={"PATH": "/usr/bin:/bin", "DJANGO_DEBUG": "1", "HOME": str(tmp_path)},
    )
    current = {(e.msgid, e.msgid_plural) for e in messages(tmp_path / "locale/zh_Hans/LC_MESSAGES/django.po")}
    committed = {(e.msgid, e.msgid_plural) for e in messages(PO)}
    assert sorted(current - committed) == [], "marked in the code, missing from the .po (run makemessages)"
    assert sorted(committed - current) == [], "in the .po, no longer in the code (stale)"
