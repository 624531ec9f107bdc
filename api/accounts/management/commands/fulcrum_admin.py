"""Create the admin account if missing, with a generated password printed once."""

import os
import secrets

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand


class Command(BaseCommand):
    help = "Ensure an admin superuser exists; print its password only when it is created or reset."

    def add_arguments(self, parser):
        parser.add_argument("--username", default="admin")
        parser.add_argument("--reset", action="store_true", help="set a new password even if the user exists")
        parser.add_argument("--password-file", help="also write the password here (mode 600)")

    def handle(self, username, reset, password_file, **options):
        users = get_user_model()
        user = users.objects.filter(username=username).first()
        if user is not None and not reset:
            self.stdout.write(f"user {username} exists; password unchanged (use --reset for a new one)")
            return
        password = secrets.token_urlsafe(12)
        if user is None:
            users.objects.create_superuser(username=username, password=password, email="")
        else:
            user.set_password(password)
            user.save(update_fields=["password"])
        if password_file:
            fd = os.open(password_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w") as f:
                f.write(password + "\n")
        self.stdout.write(f"user {username} password: {password}")
