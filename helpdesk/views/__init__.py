"""The agent dashboard: server-rendered pages for the people who answer customers.

Every page lives under `/app/accounts/<account_id>/` and resolves the caller's membership first (404 for
anyone who is not a member, 403 for agents on admin-only pages). Reads go through `helpdesk.selectors`, writes through
`helpdesk.services`, exactly like the REST API.
"""
