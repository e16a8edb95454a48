"""An e-mail inbox's SMTP and IMAP passwords are encrypted at rest (helpdesk.crypto, Fernet, keys from
HELPDESK_SECRETS_KEYS): what the database holds is not the password, keys rotate, a key that cannot read them is
a clear error (a failed delivery or poll that says why, never a crash and never the password), the IMAP password
is its own (the SMTP one only while none is set), and the admin writes them without ever showing them. The logins
are checked by real servers on 127.0.0.1: aiosmtpd with AUTH and pymap."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword
from cryptography.fernet import Fernet
from django.core.management import CommandError, call_command
from django.db import connection

from helpdesk.channels.base import PollUnavailable
from helpdesk.channels.email import imap
from helpdesk.crypto import SecretKeysInvalid, SecretUnreadable
from helpdesk.models import Inbox
from tests.factories import AccountFactory
from tests.helpdesk.channels_email.imap_server import PASSWORD, USER, ImapServer, imap_server
from tests.helpdesk.channels_email.support import SMTP_PASSWORD, email_inbox
from tests.helpdesk.channels_email.test_mime import fixture
from tests.helpdesk.channels_email.test_smtp_out import Sink, reply_to_mail, send
from tests.support.servers import free_port

pytestmark = [
    pytest.mark.django_db,
    # The test SMTP server takes AUTH without TLS, as a relay on a private network (smtp_security "none") does.
    pytest.mark.filterwarnings("ignore:Requiring AUTH while not requiring TLS"),
]

OLD, NEW = Fernet.generate_key().decode(), Fernet.generate_key().decode()


def use_keys(settings, *keys: str) -> None:
    settings.HELPDESK = {**settings.HELPDESK, "SECRETS_KEYS": list(keys)}


def stored_row(inbox: Inbox) -> tuple[str, str, str]:
    """The columns as the database holds them (raw SQL: no model code in between)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT smtp_password_encrypted, imap_password_encrypted, access_token FROM helpdesk_inbox "
            "WHERE id = %s",
            [inbox.id],
        )
        return cursor.fetchone()


class AuthSink(Sink):
    """The SMTP server of Sink, which takes mail only after a login as `help` with `SMTP_PASSWORD`."""

    def __init__(self) -> None:
        super().__init__()
        self.logins: list[tuple[bytes, bool]] = []

    def authenticate(self, server, session, envelope, mechanism, auth_data) -> AuthResult:
        ok = isinstance(auth_data, LoginPassword) and (auth_data.login, auth_data.password) == (
            b"help",
            SMTP_PASSWORD.encode(),
        )
        self.logins.append((auth_data.login if isinstance(auth_data, LoginPassword) else b"", ok))
        return AuthResult(success=ok)


@pytest.fixture
def auth_sink() -> Iterator[tuple[AuthSink, int]]:
    handler, port = AuthSink(), free_port()
    controller = Controller(
        handler,
        hostname="127.0.0.1",
        port=port,
        authenticator=handler.authenticate,
        auth_required=True,
        auth_require_tls=False,  # a relay on the private network, as `smtp_security: none` says
    )
    controller.start()
    try:
        yield handler, port
    finally:
        controller.stop()


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ImapServer]:
    with imap_server(tmp_path / "pymap.log") as running:
        yield running


def smtp_inbox(port: int) -> Inbox:
    return email_inbox(smtp_host="127.0.0.1", smtp_port=str(port), smtp_security="none", smtp_username="help")


def test_the_database_holds_tokens_not_passwords_and_the_smtp_server_gets_the_password(
    client, auth_sink, settings
):
    use_keys(settings, NEW)
    handler, port = auth_sink
    inbox = smtp_inbox(port)
    inbox.imap_password_set(PASSWORD)
    inbox.save()

    smtp_column, imap_column, access_token = stored_row(inbox)
    assert SMTP_PASSWORD not in smtp_column and PASSWORD not in imap_column
    assert Fernet(NEW.encode()).decrypt(smtp_column.encode()).decode() == SMTP_PASSWORD
    assert smtp_column != imap_column and access_token == ""

    reply = reply_to_mail(client, inbox, fixture("gmail_reply"), "On its way.")
    assert send(reply).ok
    assert handler.logins == [(b"help", True)]
    assert len(handler.mails) == 1


def test_a_rotated_key_still_reads_and_the_rotation_command_moves_every_secret_to_the_new_key(settings):
    use_keys(settings, OLD)
    inbox = email_inbox()
    inbox.imap_password_set(PASSWORD)
    inbox.save()
    before = stored_row(inbox)

    use_keys(settings, NEW, OLD)  # the new key first: it encrypts, the old one still decrypts
    inbox.refresh_from_db()
    assert (inbox.smtp_password(), inbox.imap_password()) == (SMTP_PASSWORD, PASSWORD)
    call_command("helpdesk_secrets_rotate", stdout=None)
    after = stored_row(inbox)
    assert after[:2] != before[:2]

    use_keys(settings, NEW)  # the old key dropped: nothing was left behind on it
    inbox.refresh_from_db()
    assert (inbox.smtp_password(), inbox.imap_password()) == (SMTP_PASSWORD, PASSWORD)


def test_rotation_names_a_secret_no_key_reads_and_leaves_it_as_it_was(settings):
    use_keys(settings, OLD)
    lost = email_inbox()
    use_keys(settings, NEW)
    kept = email_inbox()
    column = stored_row(lost)[0]
    with pytest.raises(CommandError, match=f"inbox {lost.id} smtp_password_encrypted"):
        call_command("helpdesk_secrets_rotate")
    assert stored_row(lost)[0] == column
    kept.refresh_from_db()
    assert kept.smtp_password() == SMTP_PASSWORD


def test_a_wrong_key_fails_the_delivery_with_the_reason_and_never_the_password(client, auth_sink, settings):
    use_keys(settings, OLD)
    handler, port = auth_sink
    inbox = smtp_inbox(port)
    reply = reply_to_mail(client, inbox, fixture("gmail_reply"), "On its way.")
    use_keys(settings, NEW)

    with pytest.raises(SecretUnreadable, match="HELPDESK_SECRETS_KEYS"):
        Inbox.objects.get(pk=inbox.pk).smtp_password()
    result = send(reply)
    assert (result.ok, result.permanent) == (False, True)
    assert "SMTP password cannot be decrypted with the configured keys" in result.error
    assert handler.logins == [] and handler.mails == []  # never sent with a wrong or empty password


def test_a_wrong_key_is_a_clear_poll_error_and_a_malformed_key_says_what_it_must_be(server, settings, caplog):
    use_keys(settings, OLD)
    inbox = email_inbox(
        imap_host="127.0.0.1", imap_port=str(server.port), imap_security="none", imap_username=USER
    )
    inbox.imap_password_set(PASSWORD)
    inbox.save()
    use_keys(settings, NEW)
    caplog.set_level(logging.DEBUG)
    with (
        pytest.raises(PollUnavailable, match="IMAP password cannot be decrypted"),
        imap.Mailbox(inbox, timeout=5),
    ):
        pass
    use_keys(settings, "not-a-fernet-key")
    with pytest.raises(SecretKeysInvalid, match="must be Fernet keys"):
        inbox.imap_password()
    assert PASSWORD not in caplog.text and SMTP_PASSWORD not in caplog.text


def test_the_imap_password_is_its_own_and_the_smtp_one_only_while_none_is_set(server):
    inbox = email_inbox(
        imap_host="127.0.0.1", imap_port=str(server.port), imap_security="none", imap_username=USER
    )
    with pytest.raises(PollUnavailable, match="login failed"), imap.Mailbox(inbox, timeout=5):
        pass  # the SMTP password is not the mailbox's
    inbox.imap_password_set(PASSWORD)
    inbox.save()
    with imap.Mailbox(inbox, timeout=5) as box:
        assert box.unseen(10) == ([], [])
    assert inbox.smtp_password() == SMTP_PASSWORD


def test_the_admin_writes_both_passwords_encrypted_and_never_shows_them(admin_client):
    account = AccountFactory()
    response = admin_client.post(
        "/admin/helpdesk/inbox/add/",
        {
            "account": account.pk,
            "name": "Support mail",
            "channel_type": "email",
            "email_smtp_host": "smtp.shop.example",
            "email_from_address": "help@shop.example",
            "new_smtp_password": "smtp pass 1",
            "new_imap_password": "imap pass 2",
            "provider_config": "{}",
        },
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    inbox = Inbox.objects.get(name="Support mail")
    assert (inbox.smtp_password(), inbox.imap_password(), inbox.access_token) == (
        "smtp pass 1",
        "imap pass 2",
        "",
    )
    page = admin_client.get(f"/admin/helpdesk/inbox/{inbox.pk}/change/").content.decode()
    assert "SMTP password" in page and "IMAP password" in page
    for secret in (
        "smtp pass 1",
        "imap pass 2",
        inbox.smtp_password_encrypted,
        inbox.imap_password_encrypted,
    ):
        assert secret not in page

    # Blank keeps them; an access token typed into an e-mail inbox is its SMTP password, never stored plain.
    response = admin_client.post(
        f"/admin/helpdesk/inbox/{inbox.pk}/change/",
        {
            "account": account.pk,
            "name": "Support mail",
            "channel_type": "email",
            "email_smtp_host": "smtp.shop.example",
            "email_from_address": "help@shop.example",
            "new_access_token": "smtp pass 3",
            "provider_config": "{}",
            "after_resolution": "new",
            # The members inline's management form, as the page sends it (no members).
            "inbox_members-TOTAL_FORMS": "0",
            "inbox_members-INITIAL_FORMS": "0",
        },
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    inbox.refresh_from_db()
    assert (inbox.smtp_password(), inbox.imap_password(), inbox.access_token) == (
        "smtp pass 3",
        "imap pass 2",
        "",
    )
