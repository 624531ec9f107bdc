"""Accounts use Django's users; roles, named tokens and the audit log come later."""
