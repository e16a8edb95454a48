from typing import TYPE_CHECKING

from django.conf import settings
from django.db import models

from .account import Account

if TYPE_CHECKING:
    from django.contrib.auth.models import User


class Team(models.Model):
    """A group of the account's people (billing, returns, ...). A scenario or a routing node names the team
    that picks up its escalations; they are assigned round-robin among its available members
    (helpdesk.services.assignment)."""

    account = models.ForeignKey(Account, on_delete=models.CASCADE, related_name="teams")
    name = models.CharField(max_length=100)
    description = models.TextField(blank=True)
    auto_assign = models.BooleanField(
        default=True,
        help_text="Assign the team's escalations round-robin to its online members with room for more.",
    )
    # The through model is named by a string, so the plugin cannot infer the field's types: spelled out here.
    members: "models.ManyToManyField[User, TeamMember]" = models.ManyToManyField(
        settings.AUTH_USER_MODEL, through="TeamMember", related_name="support_teams", blank=True
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        constraints = [models.UniqueConstraint(fields=["account", "name"], name="team_unique_name")]

    def __str__(self) -> str:
        return self.name


class TeamMember(models.Model):
    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="team_members")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    # Round-robin: the next conversation goes to the eligible member assigned longest ago (never first).
    last_assigned_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["team", "user"], name="team_member_unique")]

    def __str__(self) -> str:
        return f"{self.user} in {self.team}"
