"""Admin of teams (with their members), canned responses, satisfaction ratings and notifications."""

from __future__ import annotations

from django import forms
from django.contrib import admin
from django.http import HttpRequest

from helpdesk.models import CannedResponse, CsatResponse, Membership, Notification, Team, TeamMember

from .scoping import AccountScopedAdminMixin, AccountScopedInlineMixin


class TeamMemberFormSet(forms.BaseInlineFormSet):
    """A team's members are people of the team's account: a user of another account (or none) is refused on
    the row, whoever edits (the user choices are scoped too, but a superuser sees every user)."""

    def clean(self) -> None:
        super().clean()
        account_id = self.instance.account_id
        if account_id is None:
            return
        members = set(Membership.objects.filter(account_id=account_id).values_list("user_id", flat=True))
        for form in self.forms:
            data = getattr(form, "cleaned_data", None)
            if not data or data.get("DELETE") or data.get("user") is None:
                continue
            if data["user"].pk not in members:
                form.add_error("user", f"{data['user']} is not a member of {self.instance.account}.")


class TeamMemberInline(AccountScopedInlineMixin, admin.TabularInline):
    model = TeamMember
    formset = TeamMemberFormSet
    extra = 0
    fields = ["user", "last_assigned_at"]
    readonly_fields = ["last_assigned_at"]
    verbose_name = "member"
    verbose_name_plural = "members"


@admin.register(Team)
class TeamAdmin(AccountScopedAdminMixin, admin.ModelAdmin):
    """Teams pick up the escalations of the scenarios and routing nodes that name them, round-robin among
    their online members with room for more (helpdesk.services.assignment)."""

    list_display = ["name", "account", "auto_assign", "member_count"]
    list_filter = ["auto_assign", ("account", admin.RelatedOnlyFieldListFilter)]
    search_fields = ["name", "description"]
    fields = ["account", "name", "description", "auto_assign"]
    inlines = [TeamMemberInline]

    def get_readonly_fields(self, request: HttpRequest, obj: Team | None = None) -> list[str]:
        # Scenarios and conversations of the account point at it: a team stays in its account.
        return ["account"] if obj is not None and obj.pk else []

    @admin.display(description="Members")
    def member_count(self, obj: Team) -> int:
        return obj.team_members.count()


@admin.register(CannedResponse)
class CannedResponseAdmin(AccountScopedAdminMixin, admin.ModelAdmin):
    """Saved replies; agents type `/` and the short code in the composer."""

    list_display = ["short_code", "account", "preview", "created_at"]
    list_filter = [("account", admin.RelatedOnlyFieldListFilter)]
    search_fields = ["short_code", "content"]
    fields = ["account", "short_code", "content"]

    @admin.display(description="Content")
    def preview(self, obj: CannedResponse) -> str:
        return obj.content[:80]


@admin.register(CsatResponse)
class CsatResponseAdmin(AccountScopedAdminMixin, admin.ModelAdmin):
    """Customers' ratings (read only: they come from the customers' answers in their channel)."""

    read_only = True
    list_display = ["conversation", "rating", "comment", "account", "created_at"]
    list_filter = ["rating"]
    list_select_related = ["conversation", "account"]
    search_fields = ["comment"]

    def get_readonly_fields(self, request: HttpRequest, obj: CsatResponse | None = None) -> list[str]:
        return [f.name for f in CsatResponse._meta.concrete_fields]


@admin.register(Notification)
class NotificationAdmin(AccountScopedAdminMixin, admin.ModelAdmin):
    """What people were told (read only: escalations, assignments and mentions write them)."""

    read_only = True
    list_display = ["created_at", "user", "kind", "text", "read_at", "account"]
    list_filter = ["kind"]
    list_select_related = ["user", "account"]
    search_fields = ["text"]

    def get_readonly_fields(self, request: HttpRequest, obj: Notification | None = None) -> list[str]:
        return [f.name for f in Notification._meta.concrete_fields]
