"""TLS certificates and CA bundles that virtual services and pools refer to by name."""

from datetime import timedelta

from django.db import models
from django.utils import timezone

from certificates import crypto
from certificates import validators as v
from fulcrum.concurrency import version_field
from fulcrum.validators import validate_name

EXPIRY_WARNING = timedelta(days=30)


class Certificate(models.Model):
    """A server certificate with its chain and private key (TLS offload, SNI), or a CA bundle
    without key that verifies clients or servers.

    The PEM content is fixed once stored: a renewal is a new certificate the service is
    pointed at, so a revision always names exactly the bytes it was built from. The
    fields after ``private_key`` are derived from the content on every save.
    """

    name = models.CharField(max_length=63, unique=True, validators=[validate_name])
    description = models.CharField(max_length=200, blank=True)
    certificate = models.TextField(
        validators=[v.validate_pem_size],
        help_text="PEM of the server certificate or, for a CA bundle, of the first CA certificate.",
    )
    chain = models.TextField(
        blank=True,
        validators=[v.validate_pem_size],
        help_text="PEM of further certificates: intermediates in order, or the rest of a CA bundle.",
    )
    private_key = models.TextField(
        blank=True,
        validators=[v.validate_pem_size],
        help_text="PEM private key of the certificate; empty for a CA bundle. Never shown again.",
    )

    subject = models.TextField(editable=False, help_text="RFC 4514 distinguished name.")
    issuer = models.TextField(editable=False, help_text="RFC 4514 distinguished name.")
    sans = models.JSONField("SANs", default=list, editable=False, help_text="DNS names and IP addresses.")
    not_before = models.DateTimeField(editable=False)
    not_after = models.DateTimeField(editable=False)
    fingerprint = models.CharField(
        max_length=64, unique=True, editable=False, help_text="SHA-256 of the certificate (DER), lower-case hex."
    )
    key_type = models.CharField(
        max_length=16, blank=True, editable=False, help_text="rsa-2048, ecdsa-p256...; empty without key."
    )
    is_ca = models.BooleanField("is CA", default=False, editable=False)
    created = models.DateTimeField(auto_now_add=True)
    updated = models.DateTimeField(auto_now=True)

    version = version_field()

    class Meta:
        ordering = ["name"]
        verbose_name = "certificate"
        verbose_name_plural = "certificates"

    def __str__(self):
        return self.name

    def save(self, *args, **kwargs):
        self.derive()
        super().save(*args, **kwargs)

    def derive(self):
        """Fill the derived fields from the PEM content."""
        (leaf,) = crypto.load_certificates(self.certificate)
        for field, value in crypto.describe(leaf).items():
            setattr(self, field, value)
        self.key_type = crypto.key_type(crypto.load_private_key(self.private_key)) if self.private_key else ""

    @property
    def has_key(self):
        return bool(self.key_type)

    @property
    def expires_in_days(self):
        """Whole days left (negative once expired)."""
        return (self.not_after - timezone.now()).days

    @property
    def warnings(self):
        """What an operator should fix soon, though the certificate is usable today."""
        now = timezone.now()
        found = []
        if self.not_after <= now:
            found.append(f"expired on {self.not_after:%Y-%m-%d}: renew it and point its users at the new one")
        elif self.not_after - now <= EXPIRY_WARNING:
            found.append(f"expires in {self.expires_in_days} days, on {self.not_after:%Y-%m-%d}: renew it")
        if self.chain:
            (leaf,) = crypto.load_certificates(self.certificate)
            chain = crypto.load_certificates(self.chain)
            # A CA bundle's certificates are separate trust anchors; only a served chain must link.
            if self.has_key:
                found += crypto.link_warnings(leaf, chain)
            found += crypto.expiry_warnings(chain, now)
        return found

    def users(self):
        """What refers to this certificate, as "virtual service web" strings.

        Walks every relation other models declare to Certificate (foreign keys, many-to-many
        fields), so an app that adds one protects its references without registering here.
        A foreign key with ``related_name="+"`` is hidden from the walk: give it a name.
        """
        found = set()  # one object may refer through several fields
        for relation in self._meta.related_objects:
            model = relation.related_model
            for obj in model._default_manager.filter(**{relation.field.name: self}):
                found.add(f"{model._meta.verbose_name} {obj}")
        return sorted(found)
