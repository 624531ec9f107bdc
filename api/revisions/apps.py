from django.apps import AppConfig


class RevisionsConfig(AppConfig):
    name = "revisions"
    verbose_name = "Revisions"
