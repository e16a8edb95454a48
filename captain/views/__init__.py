"""Captain's pages in the dashboard: the per-run debug log, the playground and the usage page.

They live in captain (helpdesk never imports captain) and reuse the dashboard frame from `helpdesk.views.base`.
All three are for the account's administrators: they show prompts, model output and costs.
"""
