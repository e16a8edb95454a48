"""Invitations: an administrator invites an e-mail address into the account with a role, the address gets a
one-time link by mail, and whoever opens it joins (a new person sets a name and a password; someone who already
has a user with that address signs in and joins).

Why it is built this way:
- Only the token's hash is stored (helpdesk.models.invitations), so the link is in the mail and nowhere else.
- Accepting is one conditional UPDATE (still open, not expired) before anything else is written, inside the
  transaction that creates the user and the membership: two tabs (or two people with the forwarded mail)
  cannot both accept, and a refused accept changes nothing.
- The mail leaves after the commit: a rolled-back invitation never sends a link that does not work.
- The audit log records invitations and revocations (registered in helpdesk.services.audit) and the membership
  an accept creates, like every other change to the account's people.
"""

from __future__ import annotations

import logging
import secrets
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.mail import EmailMessage
from django.core.validators import validate_email
from django.db import IntegrityError, transaction
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _

from helpdesk.conf import helpdesk_setting
from helpdesk.models import Invitation, Membership
from helpdesk.models.invitations import token_hash
from helpdesk.selectors.invitations import (
    invitation_for_token,
    is_account_member_email,
    user_with_email,
)

logger = logging.getLogger(__name__)


class InvitationError(Exception):
    """An invitation that cannot be made, revoked or accepted; `message` is for the person, `code` for
    callers that answer differently per case (the accept page: 404 for unknown, 410 for used/expired/revoked)."""

    def __init__(self, message: str, *, code: str) -> None:
        super().__init__(message)
        self.message = message
        self.code = code


def invitation_refusal(invitation: Invitation | None) -> InvitationError | None:
    """Why a link no longer works (its invitation: None for a token nobody was sent), or None when it does."""
    if invitation is None:
        return InvitationError(_("This invitation link is not valid."), code="unknown")
    state = invitation.state(timezone.now())
    if state == Invitation.State.ACCEPTED:
        return InvitationError(_("This invitation has already been used."), code="used")
    if state == Invitation.State.REVOKED:
        return InvitationError(_("This invitation was withdrawn."), code="revoked")
    if state == Invitation.State.EXPIRED:
        return InvitationError(_("This invitation has expired."), code="expired")
    return None


def _require_admin(*, account_id: int, user: Any) -> None:
    is_admin = Membership.objects.filter(
        account_id=account_id, user_id=user.pk, role=Membership.Role.ADMIN
    ).exists()
    if not is_admin:
        raise PermissionDenied(_("Only administrators of this account may invite or withdraw invitations."))


def invitation_create(*, account_id: int, email: str, role: str, invited_by: Any) -> Invitation:
    """Invite `email` with `role`; an open invitation to the same address is replaced (its link stops
    working). The mail with the link is sent after the commit."""
    _require_admin(account_id=account_id, user=invited_by)
    email = email.strip().lower()
    validate_email(email)
    if role not in Membership.Role.values:
        raise ValidationError(_("Choose a role."), code="role")
    if is_account_member_email(account_id=account_id, email=email):
        raise InvitationError(
            _("%(email)s is already a member of this account.") % {"email": email}, code="member"
        )
    token = secrets.token_urlsafe(32)
    now = timezone.now()
    try:
        with transaction.atomic():
            # One open invitation per address: the old link is withdrawn (a row save, so the audit log sees it).
            for old in Invitation.objects.select_for_update().filter(
                account_id=account_id, email=email, accepted_at__isnull=True, revoked_at__isnull=True
            ):
                old.revoked_at = now
                old.save(update_fields=["revoked_at"])
            invitation = Invitation.objects.create(
                account_id=account_id,
                email=email,
                role=role,
                invited_by=invited_by,
                token_hash=token_hash(token),
                expires_at=now + timedelta(days=helpdesk_setting("INVITATION_DAYS")),
            )
    except IntegrityError as exc:  # another administrator invited the same address at the same moment
        raise InvitationError(
            _("%(email)s was just invited by someone else.") % {"email": email}, code="conflict"
        ) from exc
    mail = _invitation_mail(invitation=invitation, token=token, invited_by=invited_by)
    transaction.on_commit(lambda: _send(mail, invitation_id=invitation.pk))
    return invitation


def invitation_link(token: str) -> str:
    return settings.PUBLIC_BASE_URL.rstrip("/") + reverse("dashboard:invitation-accept", args=[token])


def _invitation_mail(*, invitation: Invitation, token: str, invited_by: Any) -> EmailMessage:
    context = {
        "account": invitation.account,
        "inviter": invited_by.get_full_name() or invited_by.get_username(),
        "role": invitation.get_role_display(),
        "link": invitation_link(token),
        "expires_at": invitation.expires_at,
    }
    subject = " ".join(render_to_string("helpdesk/email/invitation_subject.txt", context).split())
    body = render_to_string("helpdesk/email/invitation_body.txt", context)
    return EmailMessage(subject=subject, body=body, to=[invitation.email])


def _send(mail: EmailMessage, *, invitation_id: int) -> None:
    # A mail server that is down must not undo the invitation: it is logged (never the address or the link)
    # and the administrator can invite again, which sends a new link.
    try:
        mail.send()
    except Exception as exc:  # any backend error
        logger.warning("invitation %s e-mail not sent: %s", invitation_id, type(exc).__name__)


def invitation_revoke(*, account_id: int, invitation_id: int, revoked_by: Any) -> Invitation:
    """Withdraw an open invitation: its link stops working. An accepted or withdrawn one is refused."""
    _require_admin(account_id=account_id, user=revoked_by)
    with transaction.atomic():
        invitation = (
            Invitation.objects.select_for_update().filter(account_id=account_id, pk=invitation_id).first()
        )
        if invitation is None:
            raise InvitationError(_("There is no such invitation."), code="unknown")
        if invitation.accepted_at is not None:
            raise InvitationError(_("This invitation has already been used."), code="used")
        if invitation.revoked_at is not None:
            raise InvitationError(_("This invitation was withdrawn."), code="revoked")
        invitation.revoked_at = timezone.now()
        invitation.save(update_fields=["revoked_at"])
    return invitation


def _claim(invitation: Invitation) -> None:
    """Mark the invitation used if it still is open: the one write that decides who accepted it."""
    now = timezone.now()
    claimed = Invitation.objects.filter(
        pk=invitation.pk, accepted_at__isnull=True, revoked_at__isnull=True, expires_at__gt=now
    ).update(accepted_at=now)
    if claimed != 1:
        invitation.refresh_from_db()
        raise invitation_refusal(invitation) or InvitationError(
            _("This invitation has already been used."), code="used"
        )


def invitation_accept(*, token: str, user: Any = None, name: str = "", password: str = "") -> Membership:
    """Accept the invitation the link's `token` opens and return the new membership.

    `user`: a signed-in person whose e-mail is the invited address joins with it. Without one, a new user is
    made (username and e-mail: the address, `name`, `password` checked by the project's password validators);
    when the address already has a user, that person must sign in instead. Used, expired, withdrawn and
    unknown links raise InvitationError and change nothing."""
    invitation = invitation_for_token(token=token)
    refusal = invitation_refusal(invitation)
    if refusal is not None or invitation is None:
        raise refusal or InvitationError(_("This invitation link is not valid."), code="unknown")
    if user is not None:
        if (user.email or "").strip().lower() != invitation.email:
            raise InvitationError(
                _("This invitation is for %(email)s: sign in as that person to accept it.")
                % {"email": invitation.email},
                code="wrong_person",
            )
        if is_account_member_email(account_id=invitation.account_id, email=invitation.email):
            raise InvitationError(_("You are already a member of this account."), code="member")
    else:
        if user_with_email(email=invitation.email) is not None:
            raise InvitationError(
                _("%(email)s already has an account: sign in to join.") % {"email": invitation.email},
                code="sign_in",
            )
        name = name.strip()
        if not name:
            raise ValidationError(_("Enter your name."), code="name")
        candidate = get_user_model()(username=invitation.email, email=invitation.email, first_name=name)
        validate_password(password, user=candidate)
    try:
        with transaction.atomic():
            _claim(invitation)
            if user is None:
                user = get_user_model().objects.create_user(
                    username=invitation.email,
                    email=invitation.email,
                    password=password,
                    first_name=name[:150],
                )
            Invitation.objects.filter(pk=invitation.pk).update(accepted_by=user)
            membership = Membership.objects.create(
                account_id=invitation.account_id, user=user, role=invitation.role
            )
    except IntegrityError as exc:  # the username is taken, or the person was added some other way meanwhile
        raise InvitationError(
            _("%(email)s already has an account or is already a member: sign in instead.")
            % {"email": invitation.email},
            code="conflict",
        ) from exc
    return membership
