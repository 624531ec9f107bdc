"""What the operator wants balanced: virtual services, pools, members and health checks."""

from django.db import models

from services import validators as v
from services.choices import Algorithm, CheckType, MemberState, Protocol


class Pool(models.Model):
    """A group of real servers and the algorithm that spreads traffic over them."""

    name = models.CharField(max_length=63, unique=True, validators=[v.validate_name])
    algorithm = models.CharField(max_length=32, choices=Algorithm.choices, default=Algorithm.ROUND_ROBIN)
    description = models.CharField(max_length=200, blank=True)

    class Meta:
        ordering = ["name"]
        verbose_name = "pool"
        verbose_name_plural = "pools"

    def __str__(self):
        return self.name


class Member(models.Model):
    """One real server (address and port) in a pool."""

    pool = models.ForeignKey(Pool, on_delete=models.CASCADE, related_name="members")
    name = models.CharField(max_length=63, validators=[v.validate_name])
    address = models.GenericIPAddressField(unpack_ipv4=True)
    port = models.PositiveIntegerField(validators=v.port_validators)
    weight = models.PositiveSmallIntegerField(default=1, validators=v.weight_validators)
    state = models.CharField(max_length=16, choices=MemberState.choices, default=MemberState.ENABLED)

    class Meta:
        ordering = ["pool__name", "name"]
        verbose_name = "member"
        verbose_name_plural = "members"
        constraints = [
            models.UniqueConstraint(fields=["pool", "name"], name="member_unique_name_in_pool"),
            models.UniqueConstraint(fields=["pool", "address", "port"], name="member_unique_endpoint_in_pool"),
        ]

    def __str__(self):
        return f"{self.pool.name}/{self.name}"


class HealthCheck(models.Model):
    """How a pool's members are probed, and how many results flip their state."""

    pool = models.OneToOneField(Pool, on_delete=models.CASCADE, related_name="health_check")
    type = models.CharField(max_length=8, choices=CheckType.choices, default=CheckType.TCP)
    path = models.CharField(max_length=1024, default="/", validators=[v.validate_http_path])
    expected_status = models.PositiveSmallIntegerField(default=200, validators=v.status_validators)
    host = models.CharField(
        max_length=253,
        blank=True,
        validators=[v.validate_host],
        help_text="Host header for HTTP checks; empty sends an HTTP/1.0 request without one.",
    )
    interval_ms = models.PositiveIntegerField(default=2000, validators=v.interval_validators)
    timeout_ms = models.PositiveIntegerField(default=1000, validators=v.interval_validators)
    rise = models.PositiveSmallIntegerField(default=2, validators=v.rise_fall_validators)
    fall = models.PositiveSmallIntegerField(default=3, validators=v.rise_fall_validators)

    class Meta:
        verbose_name = "health check"
        verbose_name_plural = "health checks"

    def __str__(self):
        return f"{self.pool.name}: {self.type}"


class VirtualService(models.Model):
    """A VIP and port that clients connect to, and the pool that serves it."""

    name = models.CharField(max_length=63, unique=True, validators=[v.validate_name])
    vip = models.GenericIPAddressField("VIP", unpack_ipv4=True)
    port = models.PositiveIntegerField(validators=v.port_validators)
    protocol = models.CharField(max_length=8, choices=Protocol.choices, default=Protocol.HTTP)
    enabled = models.BooleanField(default=True)
    default_pool = models.ForeignKey(Pool, on_delete=models.PROTECT, related_name="virtual_services")
    description = models.CharField(max_length=200, blank=True)

    class Meta:
        ordering = ["name"]
        verbose_name = "virtual service"
        verbose_name_plural = "virtual services"
        constraints = [models.UniqueConstraint(fields=["vip", "port"], name="virtualservice_unique_listener")]

    def __str__(self):
        return self.name
