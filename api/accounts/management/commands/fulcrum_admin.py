"""Create the admin account if missing, with a generated password printed once, or with the
password read from standard input (the appliance's first-boot setup: the secret never appears
in a process list or a file)."""

import os
import secrets
import sys

from django.contrib.auth import get_user_model
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from accounts import audit
from accounts.choices import AuditAction


class Command(BaseCommand):
    help = (
        "Ensure an admin superuser exists; print its password only when it is created or reset. "
        "With --password-stdin, set the password read from standard input instead (nothing is printed)."
    )

    def add_arguments(self, parser):
        parser.add_argument("--username", default="admin")
        parser.add_argument("--reset", action="store_true", help="set a new password even if the user exists")
        parser.add_argument("--password-file", help="also write the password here (mode 600)")
        parser.add_argument(
            "--password-stdin",
            action="store_true",
            help="read the password (one line) from standard input and set it, creating the user if missing",
        )

    def handle(self, username, reset, password_file, password_stdin, **options):
        if password_stdin:
            if password_file:
                raise CommandError("--password-file and --password-stdin do not go together")
            self.set_given_password(username, read_password(sys.stdin))
            return
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

    def set_given_password(self, username, password):
        """Create the superuser with ``password``, or give an existing user that password.

        The password passes the same validators as a change through the API; a refused one
        changes nothing and the messages say why.
        """
        users = get_user_model()
        user = users.objects.filter(username=username).first()
        try:
            validate_password(password, user or users(username=username))
        except ValidationError as err:
            raise CommandError(f"password refused: {' '.join(err.messages)}") from None
        if user is None:
            user = users.objects.create_superuser(username=username, password=password, email="")
            audit.record_event("create", actor_name="system (fulcrum_admin)", obj=user, detail="superuser")
            self.stdout.write(f"user {username}: created")
            return
        user.set_password(password)
        user.save(update_fields=["password"])
        audit.record_event(AuditAction.PASSWORD_CHANGE, actor_name="system (fulcrum_admin)", obj=user)
        self.stdout.write(f"user {username}: password set")


def read_password(stream):
    """The first line of ``stream`` without its line ending; refuse an empty one or control characters."""
    line = stream.readline()
    password = line[:-1] if line.endswith("\n") else line
    password = password[:-1] if password.endswith("\r") else password
    if not password:
        raise CommandError("no password on standard input")
    if any(ord(c) < 32 or ord(c) == 127 for c in password):
        raise CommandError("the password contains a control character")
    return password
