from django.apps import AppConfig
from django.db.models.signals import post_migrate, post_save


class AccountsConfig(AppConfig):
    name = "accounts"
    verbose_name = "Accounts"

    def ready(self):
        from django.contrib.auth import get_user_model

        from accounts import audit, signals

        audit.connect_signals()
        post_save.connect(signals.give_profile, sender=get_user_model(), dispatch_uid="accounts_give_profile")
        post_migrate.connect(signals.give_profiles, sender=self, dispatch_uid="accounts_give_profiles")
