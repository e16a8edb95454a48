from .account import Account, Membership
from .attachment import Attachment
from .attributes import CustomAttributeDefinition
from .audit import AuditEntry
from .automation import AutomationEvent, AutomationRule, AutomationRun, Macro
from .canned import CannedResponse
from .contact import Contact, ContactInbox, ContactNote
from .conversation import Conversation, Label
from .csat import CsatResponse
from .delivery import Delivery
from .inbox import Inbox, InboxMember
from .invitations import Invitation
from .message import Message
from .notification import Notification
from .person import Language, PersonSettings
from .sign_ins import SignInEvent
from .sla import SlaBreach, SlaPolicy
from .team import Team, TeamMember
from .webhooks import WebhookDelivery, WebhookEndpoint, WebhookEvent
from .whatsapp_templates import WhatsAppTemplate, WhatsAppTemplateSend

__all__ = [
    "Account",
    "Attachment",
    "AuditEntry",
    "AutomationEvent",
    "AutomationRule",
    "AutomationRun",
    "CannedResponse",
    "Contact",
    "ContactInbox",
    "ContactNote",
    "Conversation",
    "CsatResponse",
    "CustomAttributeDefinition",
    "Delivery",
    "Inbox",
    "InboxMember",
    "Invitation",
    "Label",
    "Language",
    "Macro",
    "Membership",
    "Message",
    "Notification",
    "PersonSettings",
    "SignInEvent",
    "SlaBreach",
    "SlaPolicy",
    "Team",
    "TeamMember",
    "WebhookDelivery",
    "WebhookEndpoint",
    "WebhookEvent",
    "WhatsAppTemplate",
    "WhatsAppTemplateSend",
]
