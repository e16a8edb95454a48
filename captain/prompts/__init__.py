"""Prompt assembly for the triage assistant and scenario specialists (Jinja2, one sandboxed environment)."""

from .sandbox import PromptTemplateError, render_builder_text, render_file

__all__ = ["PromptTemplateError", "render_builder_text", "render_file"]
