from .account import Account, Membership
from .attachment import Attachment
from .attributes import CustomAttributeDefinition
from .contact import Contact, ContactInbox
from .conversation import Conversation, Label
from .delivery import Delivery
from .inbox import Inbox
from .message import Message

__all__ = [
    "Account",
    "Attachment",
    "Contact",
    "ContactInbox",
    "Conversation",
    "CustomAttributeDefinition",
    "Delivery",
    "Inbox",
    "Label",
    "Membership",
    "Message",
]
