"""Credits: one ledger row per billable event; every check of the balance and the write it allows happen under
the balance row's lock (no check-then-act across transactions).

A run holds its price before calling the model (`credit_reserve`), and the hold is settled in the outcome's
transaction: turned into a charge when the AI replied (`credit_debit`), released otherwise (`credit_release`).
Without the hold, 50 runs that all saw 10 credits left would all call the (paid) model, and 40 would then find
the limit reached after the provider had already been paid."""

from __future__ import annotations

from django.db import IntegrityError, transaction
from django.db.models import Count, F, Q, Sum

from captain.answering.models import CreditBalance, CreditLedgerEntry, CreditReservation
from captain.answering.services.jobs import jobs_pending_ids_query
from captain.assistants.models import Assistant
from captain.conf import captain_setting
from captain.copilot.models import CopilotRun
from helpdesk.models import Message


def credit_balance_for(account_id: int) -> CreditBalance:
    balance, _ = CreditBalance.objects.get_or_create(
        account_id=account_id, defaults={"limit": captain_setting("DEFAULT_CREDIT_LIMIT")}
    )
    return balance


def _balance_locked(account_id: int) -> CreditBalance:
    """The account's balance row, locked until the caller's transaction ends; made first (with the default
    limit) for an account that has none yet. The lock is tried first: the row exists for every account that
    ever had a run, so its creation costs a query only once."""
    locked = CreditBalance.objects.select_for_update(no_key=True)
    try:
        return locked.get(account_id=account_id)
    except CreditBalance.DoesNotExist:
        credit_balance_for(account_id)
        return locked.get(account_id=account_id)


def _held(account_id: int, *, excluding: list[int] | None = None) -> int:
    holds = CreditReservation.objects.filter(account_id=account_id)
    if excluding:
        holds = holds.exclude(message_id__in=excluding)
    return holds.aggregate(total=Sum("amount"))["total"] or 0


def credit_reserve(*, account_id: int, message_id: int, amount: int) -> bool:
    """Hold `amount` for the run answering `message_id` before the model is called. True when held (or already
    held by an earlier attempt at the same message); False when the account's unheld credits are short.
    The balance row is locked for the check and the insert, so two runs cannot both take the last credit."""
    with transaction.atomic():
        balance = _balance_locked(account_id)
        # The account's holds and whether this message has one, in one read (a message's hold is its account's).
        holds = CreditReservation.objects.filter(account_id=account_id).aggregate(
            total=Sum("amount"), mine=Count("pk", filter=Q(message_id=message_id))
        )
        if holds["mine"]:
            return True  # a retried attempt (worker killed mid-run) keeps its first hold
        if balance.used + (holds["total"] or 0) + amount > balance.limit:
            return False
        CreditReservation.objects.create(account_id=account_id, message_id=message_id, amount=amount)
    return True


def credit_release(*, message_ids: list[int]) -> int:
    """Give back what runs for these messages held (a handoff, an error, a skipped run). Returns the count."""
    deleted, _ = CreditReservation.objects.filter(message_id__in=message_ids).delete()
    return deleted


def credit_holds_release_finished() -> int:
    """Safety net for the sweeper: holds whose message is no longer waiting for the AI have no run left to
    settle them (every path that finishes a message releases them; this catches any that did not)."""
    deleted, _ = CreditReservation.objects.exclude(message_id__in=jobs_pending_ids_query()).delete()
    return deleted


def credit_debit(
    *,
    message: Message,
    assistant: Assistant | None,
    agent_key: str,
    amount: int | None = None,
    held_for: list[int] | None = None,
) -> bool:
    """Charge for an AI reply inside the caller's transaction. False (and nothing written) when the limit would
    be exceeded. The run's own hold (`held_for`: the messages it answers) becomes this charge; other runs'
    holds still count, and the balance row is locked for the check, so concurrent runs cannot overdraw."""
    amount = captain_setting("CREDITS_PER_REPLY") if amount is None else amount
    balance = _balance_locked(message.account_id)
    held_for = held_for or []
    CreditReservation.objects.filter(message_id__in=held_for).delete()
    if balance.used + _held(message.account_id) + amount > balance.limit:
        return False
    CreditBalance.objects.filter(pk=balance.pk).update(used=F("used") + amount)
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


# ---- copilot work (captain.copilot.services.copilot) ------------------------------------------------------------------


def credit_copilot_affordable(*, account_id: int, amount: int) -> bool:
    """Whether the account's unheld credits could pay `amount` now. Asked before the model is called, so an
    account at its limit gets a clear refusal instead of a draft it cannot pay for; `credit_copilot_debit`
    checks again under the lock, and that check is the one that counts."""
    balance = credit_balance_for(account_id)
    return balance.used + _held(account_id) + amount <= balance.limit


def credit_copilot_debit(*, run: CopilotRun, amount: int) -> bool:
    """Charge for a copilot run that produced text, inside the caller's transaction (which also stores the
    text). False (and nothing written) when the limit would be exceeded. Idempotent: a run already charged
    (a redelivered task) is not charged again; the ledger's unique (copilot_run, kind) backs that up."""
    credit_balance_for(run.account_id)
    balance = CreditBalance.objects.select_for_update(no_key=True).get(account_id=run.account_id)
    kind = CreditLedgerEntry.Kind.COPILOT
    if CreditLedgerEntry.objects.filter(copilot_run=run, kind=kind).exists():
        return True
    if balance.used + _held(run.account_id) + amount > balance.limit:
        return False
    CreditBalance.objects.filter(pk=balance.pk).update(used=F("used") + amount)
    CreditLedgerEntry.objects.create(
        account_id=run.account_id,
        copilot_run=run,
        kind=kind,
        amount=amount,
        assistant_id=run.assistant_id,
        agent_key=f"copilot:{run.kind}",
    )
    return True
