"""Credits: one ledger row per billable event, balance changed by one conditional UPDATE (no check-then-act)."""

from __future__ import annotations

from django.db import IntegrityError, transaction
from django.db.models import F

from helpdesk.models import Message

from ..conf import captain_setting
from ..models import Assistant, CreditBalance, CreditLedgerEntry


def credit_balance_for(account_id: int) -> CreditBalance:
    balance, _ = CreditBalance.objects.get_or_create(
        account_id=account_id, defaults={"limit": captain_setting("DEFAULT_CREDIT_LIMIT")}
    )
    return balance


def credit_available(*, account_id: int, amount: int | None = None) -> bool:
    amount = captain_setting("CREDITS_PER_REPLY") if amount is None else amount
    return credit_balance_for(account_id).remaining >= amount


def credit_debit(
    *, message: Message, assistant: Assistant | None, agent_key: str, amount: int | None = None
) -> bool:
    """Charge for an AI reply inside the caller's transaction. False (and nothing written) when the limit would
    be exceeded: the UPDATE only matches while `used + amount <= limit`, so concurrent runs cannot overdraw."""
    amount = captain_setting("CREDITS_PER_REPLY") if amount is None else amount
    credit_balance_for(message.account_id)
    charged = CreditBalance.objects.filter(
        account_id=message.account_id, used__lte=F("limit") - amount
    ).update(used=F("used") + amount)
    if not charged:
        return False
    CreditLedgerEntry.objects.create(
        account_id=message.account_id,
        message=message,
        kind=CreditLedgerEntry.Kind.AI_REPLY,
        amount=amount,
        assistant=assistant,
        agent_key=agent_key,
    )
    return True


@transaction.atomic
def credit_refund(*, message: Message) -> bool:
    """Give back the credit of an AI reply that was never delivered. Idempotent (unique per message and kind)."""
    charge = CreditLedgerEntry.objects.filter(message=message, kind=CreditLedgerEntry.Kind.AI_REPLY).first()
    if charge is None:
        return False
    try:
        with transaction.atomic():
            CreditLedgerEntry.objects.create(
                account_id=charge.account_id,
                message=message,
                kind=CreditLedgerEntry.Kind.REFUND,
                amount=-charge.amount,
                assistant_id=charge.assistant_id,
                agent_key=charge.agent_key,
            )
    except IntegrityError:
        return False  # already refunded
    CreditBalance.objects.filter(account_id=charge.account_id, used__gte=charge.amount).update(
        used=F("used") - charge.amount
    )
    return True
