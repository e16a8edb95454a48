"""Migration 0019 moves an e-mail inbox's password out of its plain access token into the encrypted SMTP password
(which IMAP also uses until an IMAP password is set), leaves other channels' tokens alone, and moves it back when
migrated backwards."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from helpdesk.crypto import secret_decrypt

BEFORE = [("helpdesk", "0018_message_fulltext")]
AFTER = [("helpdesk", "0019_inbox_mail_passwords_encrypted")]

pytestmark = pytest.mark.django_db(transaction=True)


def _executor() -> MigrationExecutor:
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    return executor


def test_an_email_inbox_password_is_encrypted_and_comes_back_plain_when_migrated_backwards():
    _executor().migrate(BEFORE)
    old = _executor().loader.project_state(BEFORE).apps
    Account, Inbox = old.get_model("helpdesk", "Account"), old.get_model("helpdesk", "Inbox")
    account = Account.objects.create(name="Acme")
    mail = Inbox.objects.create(account=account, name="Mail", channel_type="email", access_token="pw 1")
    bot = Inbox.objects.create(account=account, name="Bot", channel_type="telegram", access_token="123:ABC")
    try:
        _executor().migrate(AFTER)
        new = _executor().loader.project_state(AFTER).apps.get_model("helpdesk", "Inbox")
        migrated = new.objects.get(pk=mail.pk)
        assert migrated.access_token == ""
        assert "pw 1" not in migrated.smtp_password_encrypted
        assert secret_decrypt(migrated.smtp_password_encrypted) == "pw 1"
        assert migrated.imap_password_encrypted == ""  # IMAP reads the SMTP password, as it read the token
        assert new.objects.get(pk=bot.pk).access_token == "123:ABC"

        _executor().migrate(BEFORE)
        back = _executor().loader.project_state(BEFORE).apps.get_model("helpdesk", "Inbox")
        assert back.objects.get(pk=mail.pk).access_token == "pw 1"
        assert back.objects.get(pk=bot.pk).access_token == "123:ABC"
    finally:
        executor = _executor()
        executor.migrate(executor.loader.graph.leaf_nodes())
