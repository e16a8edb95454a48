"""The e-mail channel: reading mail (mime.py), Mailgun's inbound route (mailgun.py), SMTP out (smtp.py)."""

from .channel import EmailChannel

__all__ = ["EmailChannel"]
