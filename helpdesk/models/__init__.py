from .account import Account, Membership
from .contact import Contact, ContactInbox
from .conversation import Conversation, Label
from .inbox import Inbox
from .message import Message

__all__ = ["Account", "Contact", "ContactInbox", "Conversation", "Inbox", "Label", "Membership", "Message"]
