"""Prompt assembly for the triage assistant and scenario specialists (Jinja2, one sandboxed environment)."""

from .builder_text import render_builder_text, validate_builder_text
from .sandbox import PromptTemplateError, render_file
from .static_check import check_builder_template
from .variables import PROMPT_VARIABLES, available_variables, prompt_context

__all__ = [
    "PROMPT_VARIABLES",
    "PromptTemplateError",
    "available_variables",
    "check_builder_template",
    "prompt_context",
    "render_builder_text",
    "render_file",
    "validate_builder_text",
]
