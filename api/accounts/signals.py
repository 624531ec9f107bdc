"""Every person has a profile (their role)."""

from django.contrib.auth import get_user_model

from accounts.choices import Role


def _default_role(user):
    return Role.ADMIN if user.is_superuser else Role.VIEWER


def give_profile(sender, instance, created, raw=False, **kwargs):
    """A new user gets a profile: admin for a superuser, viewer otherwise."""
    from accounts.models import Profile

    if created and not raw:
        Profile.objects.get_or_create(user=instance, defaults={"role": _default_role(instance)})


def give_profiles(sender, using="default", **kwargs):
    """After migrate: a profile for every user made before roles existed."""
    from accounts.models import Profile

    missing = get_user_model().objects.using(using).filter(profile__isnull=True)
    Profile.objects.using(using).bulk_create(Profile(user=u, role=_default_role(u)) for u in missing)
