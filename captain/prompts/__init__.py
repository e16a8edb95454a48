"""Prompt assembly for the triage assistant and scenario specialists (Jinja2, one sandboxed environment)."""

from captain.prompts.builder_text import render_builder_text, validate_builder_text
from captain.prompts.sandbox import PromptTemplateError, render_file
from captain.prompts.static_check import check_builder_template
from captain.prompts.variables import PROMPT_VARIABLES, available_variables, prompt_context

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
