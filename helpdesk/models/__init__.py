from .account import Account, Membership
from .contact import Contact, ContactInbox
from .conversation import Conversation, Label
from .delivery import Delivery
from .inbox import Inbox
from .message import Message

__all__ = [
    "Account",
    "Contact",
    "ContactInbox",
    "Conversation",
    "Delivery",
    "Inbox",
    "Label",
    "Membership",
    "Message",
]
