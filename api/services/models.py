"""What the operator wants balanced: virtual services, pools, members and health checks."""

from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models

from compiler import catalog, rules
from fulcrum import validators as v
from fulcrum.concurrency import version_field
from services.choices import MEMBER_FORWARDING, Algorithm, CheckType, Forwarding, MemberState, Protocol, choices


def _persistence_default():
    return {"type": "none"}


def _compression_types_default():
    return ["text/html", "text/plain", "text/css", "application/json"]


class Pool(models.Model):
    """A group of real servers and the algorithm that spreads traffic over them."""

    name = models.CharField(max_length=63, unique=True, validators=[v.validate_name])
    algorithm = models.CharField(max_length=32, choices=Algorithm.choices, default=Algorithm.ROUND_ROBIN)
    description = models.CharField(max_length=200, blank=True)
    persistence = models.JSONField(
        default=_persistence_default,
        help_text="How a client keeps its server: {type, cookie_name, ...}; see the Persistence schema.",
    )
    http_reuse = models.CharField(
        max_length=16,
        choices=catalog.labels(catalog.HTTP_REUSE),
        default=rules.HTTP_REUSE_DEFAULT,
        help_text="Which requests may reuse an idle server connection opened for another client.",
    )
    pool_max_conn = models.IntegerField(
        default=-1,
        validators=[MinValueValidator(-1), MaxValueValidator(rules.MAXCONN_MAX)],
        help_text="Idle server connections kept per member for reuse; -1 = no limit, 0 = none.",
    )
    pool_purge_delay_ms = models.PositiveIntegerField(
        default=5000,
        validators=[MaxValueValidator(rules.TIMEOUT_MS_MAX)],
        help_text="How often idle server connections beyond need are closed.",
    )
    tls = models.BooleanField(default=False, help_text="Re-encrypt: connect to members over TLS.")
    tls_verify = models.BooleanField(default=True, help_text="Verify members' certificates against tls_ca.")
    tls_ca = models.ForeignKey(
        "certificates.Certificate",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="pools_verified",
        help_text="CA bundle that verifies members' certificates.",
    )
    tls_sni = models.CharField(
        max_length=253,
        blank=True,
        validators=[v.validate_sni],
        help_text="SNI sent to members: empty for none, a host name, or @host for the client's Host.",
    )
    proxy_protocol = models.CharField(max_length=4, choices=catalog.labels(catalog.PROXY_PROTOCOLS), default="none")
    connect_timeout_ms = models.PositiveIntegerField(default=5000, validators=v.timeout_validators)
    server_timeout_ms = models.PositiveIntegerField(default=30000, validators=v.timeout_validators)
    queue_timeout_ms = models.PositiveIntegerField(default=30000, validators=v.timeout_validators)
    maintenance_page = models.TextField(
        blank=True,
        max_length=rules.MAINTENANCE_PAGE_MAX,
        help_text="HTML answered (503) when no member can take a request; empty for HAProxy's page.",
    )
    # Layer 4 (IPVS).
    hash_port = models.BooleanField(default=False, help_text="source-hash / maglev-hash: hash the source port too.")
    hash_fallback = models.BooleanField(
        default=False,
        help_text="source-hash / maglev-hash: pick another member when the hashed one is unavailable "
        "(always on while a member is drained or failed members are quiesced).",
    )
    on_failure = models.CharField(
        max_length=8,
        choices=catalog.labels(catalog.ON_FAILURE),
        default="remove",
        help_text="Layer 4: what a failed health check does to a member.",
    )
    # Dynamic least load (DLLC): where each member's fulcrum-loadd answers.
    feedback_agent_port = models.PositiveIntegerField(
        default=rules.FEEDBACK_AGENT_PORT,
        validators=v.port_validators,
        help_text="dynamic-least-load, layer 7: the port of fulcrum-loadd's agent-check on each member "
        "(HAProxy asks it for the member's weight).",
    )
    feedback_http_port = models.PositiveIntegerField(
        default=rules.FEEDBACK_HTTP_PORT,
        validators=v.port_validators,
        help_text="dynamic-least-load: the port of fulcrum-loadd's JSON endpoint on each member "
        "(the node agent reads loads there for IPVS and for the console).",
    )
    feedback_interval_ms = models.PositiveIntegerField(
        default=1000,
        validators=[MinValueValidator(rules.CHECK_INTERVAL_MS_MIN), MaxValueValidator(rules.CHECK_INTERVAL_MS_MAX)],
        help_text="dynamic-least-load, layer 7: how often HAProxy asks each member's agent.",
    )

    version = version_field()

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
    backup = models.BooleanField(default=False, help_text="Serves only when no active member is up (sorry server).")
    max_connections = models.PositiveIntegerField(
        default=0,
        validators=v.maxconn_validators,
        help_text="Concurrent connections; beyond it requests queue. 0 = no limit.",
    )
    max_queue = models.PositiveIntegerField(
        default=0, validators=v.maxconn_validators, help_text="Requests queued for this member; 0 = no limit."
    )
    slowstart_ms = models.PositiveIntegerField(
        default=0,
        validators=[MaxValueValidator(rules.TIMEOUT_MS_MAX)],
        help_text="Ramp the weight up over this time after the member comes back; 0 = off.",
    )
    min_connections = models.PositiveIntegerField(
        default=0,
        validators=v.maxconn_validators,
        help_text="Layer 4: after reaching max_connections, take new ones again below this; 0 = off.",
    )
    forwarding = models.CharField(
        max_length=16,
        choices=MEMBER_FORWARDING,
        default="",
        blank=True,
        help_text="Layer 4: this member's IPVS forwarding method, if not the service's.",
    )
    loopback = models.BooleanField(
        default=False,
        help_text="The member is a service on each node itself, at a loopback address (127.0.0.0/8, ::1); "
        "a loopback address is refused without it.",
    )

    version = version_field()

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
    method = models.CharField(max_length=8, choices=choices(rules.CHECK_METHODS), default="GET")
    path = models.CharField(max_length=1024, default="/", validators=[v.validate_http_path])
    expected_status = models.PositiveSmallIntegerField(default=200, validators=v.status_validators)
    host = models.CharField(
        max_length=253,
        blank=True,
        validators=[v.validate_host],
        help_text="Host header for HTTP checks; empty sends an HTTP/1.0 request without one.",
    )
    expect_body = models.CharField(
        max_length=rules.REGEX_MAX,
        blank=True,
        validators=[v.validate_text],
        help_text="HTTP checks: the body must contain this string (or match this regex); empty = status only.",
    )
    expect_body_match = models.CharField(max_length=8, choices=choices(rules.CHECK_BODY_MATCH), default="string")
    agent_port = models.PositiveIntegerField(
        default=0,
        validators=[MaxValueValidator(rules.PORT_MAX)],
        help_text="Agent checks: the TCP port of the load agent on each member.",
    )
    interval_ms = models.PositiveIntegerField(default=2000, validators=v.interval_validators)
    timeout_ms = models.PositiveIntegerField(default=1000, validators=v.interval_validators)
    rise = models.PositiveSmallIntegerField(
        default=2,
        validators=v.rise_fall_validators,
        help_text="Good checks that bring a member back (layer 4: keepalived brings it back after one).",
    )
    fall = models.PositiveSmallIntegerField(
        default=3, validators=v.rise_fall_validators, help_text="Failed checks in a row that take a member out."
    )
    retry_interval_ms = models.PositiveIntegerField(
        default=0,
        validators=[MaxValueValidator(rules.CHECK_INTERVAL_MS_MAX)],
        help_text="Interval between checks after a failure, until the state settles; 0 = interval_ms.",
    )
    alpha = models.BooleanField(default=False, help_text="Layer 4: members start down until a check passes.")
    omega = models.BooleanField(default=False, help_text="Layer 4: run down notifications when keepalived stops.")
    dns_type = models.CharField(max_length=8, choices=choices(rules.DNS_TYPES, {}), default="SOA")
    dns_name = models.CharField(
        max_length=253, default=".", validators=[v.validate_dns_name], help_text="DNS checks: the name queried."
    )
    script = models.CharField(
        max_length=1024,
        blank=True,
        validators=[v.validate_check_script],
        help_text="Script checks: a program under /etc/fulcrum/checks/ and its arguments; it runs per member "
        "with the member's address and port as its first two arguments; exit 0 = up.",
    )
    script_dynamic = models.BooleanField(
        default=False, help_text="Script checks: an exit status of 2-255 sets the member's weight to status - 2."
    )

    version = version_field()

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
    port_end = models.PositiveIntegerField(
        default=0,
        validators=[MaxValueValidator(rules.PORT_MAX)],
        help_text="Layer 4: last port of a range port..port_end; 0 = the one port.",
    )
    protocol = models.CharField(max_length=8, choices=Protocol.choices, default=Protocol.HTTP)
    forwarding = models.CharField(
        max_length=16,
        choices=Forwarding.choices,
        default=Forwarding.PROXY,
        help_text="proxy = HAProxy (layer 7 or TCP proxy); nat, direct-routing, tunnel = IPVS (layer 4).",
    )
    one_packet_scheduling = models.BooleanField(
        default=False, help_text="Layer 4 UDP: schedule every datagram on its own (DNS, syslog)."
    )
    enabled = models.BooleanField(default=True)
    default_pool = models.ForeignKey(Pool, on_delete=models.PROTECT, related_name="virtual_services")
    description = models.CharField(max_length=200, blank=True)
    # TLS offload (protocol https).
    default_certificate = models.ForeignKey(
        "certificates.Certificate",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="default_for",
        help_text="Served to clients that send no SNI or an unknown name.",
    )
    sni_certificates = models.ManyToManyField(
        "certificates.Certificate",
        blank=True,
        related_name="sni_for",
        help_text="Further certificates, chosen by the name the client asks for (SNI).",
    )
    tls_policy = models.CharField(max_length=16, choices=choices(rules.TLS_POLICIES), default="intermediate")
    client_auth = models.CharField(max_length=16, choices=choices(rules.CLIENT_AUTH), default="none")
    client_ca = models.ForeignKey(
        "certificates.Certificate",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="client_ca_for",
        help_text="CA bundle that client certificates must chain to.",
    )
    alpn_h2 = models.BooleanField(default=True, help_text="Offer HTTP/2 to TLS clients (ALPN h2).")
    hsts_max_age_s = models.PositiveIntegerField(
        default=0, validators=[MaxValueValidator(rules.HSTS_MAX_AGE_MAX)], help_text="0 = no HSTS header."
    )
    redirect_https = models.BooleanField(default=False, help_text="Answer every request with a redirect to https.")
    # Protection and plumbing.
    allow_cidrs = models.JSONField(default=list, blank=True, help_text="Only these sources may connect; empty = all.")
    deny_cidrs = models.JSONField(default=list, blank=True, help_text="These sources are refused.")
    rate_limit_requests = models.PositiveIntegerField(
        default=0,
        validators=[MaxValueValidator(rules.RATE_MAX)],
        help_text="Requests per source address per period before 429; 0 = off.",
    )
    rate_limit_period_s = models.PositiveIntegerField(
        default=10, validators=[MinValueValidator(1), MaxValueValidator(rules.RATE_PERIOD_S_MAX)]
    )
    conn_limit = models.PositiveIntegerField(
        default=0, validators=v.maxconn_validators, help_text="Concurrent connections per source address; 0 = off."
    )
    max_connections = models.PositiveIntegerField(default=0, validators=v.maxconn_validators)
    max_body_bytes = models.PositiveBigIntegerField(
        default=0,
        validators=[MaxValueValidator(rules.BODY_MAX)],
        help_text="Larger request bodies, and bodies of unannounced length, get 413; 0 = no limit.",
    )
    compression = models.BooleanField(default=False)
    compression_types = models.JSONField(default=_compression_types_default, blank=True)
    forwarded = models.CharField(max_length=16, choices=choices(rules.FORWARDED), default="x-forwarded-for")
    client_timeout_ms = models.PositiveIntegerField(default=30000, validators=v.timeout_validators)
    http_request_timeout_ms = models.PositiveIntegerField(
        default=10000,
        validators=v.timeout_validators,
        help_text="Time allowed for a whole request head (slow clients).",
    )
    keep_alive_timeout_ms = models.PositiveIntegerField(default=10000, validators=v.timeout_validators)
    error_pages = models.JSONField(default=list, blank=True, help_text="[{status, content_type, body}]")

    version = version_field()

    class Meta:
        ordering = ["name"]
        verbose_name = "virtual service"
        verbose_name_plural = "virtual services"
        # TCP and UDP may share a VIP and port; overlaps (ranges, wildcards) are the compiler's.
        constraints = [
            models.UniqueConstraint(fields=["vip", "port", "protocol"], name="virtualservice_unique_listener")
        ]

    def __str__(self):
        return self.name


class Rule(models.Model):
    """One content-switching rule of a virtual service; lower positions are evaluated first."""

    virtual_service = models.ForeignKey(VirtualService, on_delete=models.CASCADE, related_name="rules")
    position = models.PositiveIntegerField(help_text="Evaluation order within the service, from 0.")
    name = models.CharField(max_length=63, validators=[v.validate_name])
    enabled = models.BooleanField(default=True)
    conditions = models.JSONField(help_text="[{kind, values, name, negate}], all must match.")
    action = models.CharField(max_length=32, choices=choices(rules.RULE_ACTIONS))
    pool = models.ForeignKey(Pool, null=True, blank=True, on_delete=models.PROTECT, related_name="rules")
    redirect_code = models.PositiveSmallIntegerField(default=302, choices=choices(rules.REDIRECT_CODES))
    redirect_location = models.CharField(max_length=1100, blank=True)
    deny_status = models.PositiveSmallIntegerField(default=403, choices=choices(rules.DENY_STATUSES))
    header_name = models.CharField(max_length=64, blank=True, validators=[v.validate_field_name])
    header_value = models.CharField(max_length=rules.HEADER_VALUE_MAX, blank=True, validators=[v.validate_text])

    version = version_field()

    class Meta:
        ordering = ["virtual_service__name", "position"]
        verbose_name = "rule"
        verbose_name_plural = "rules"
        constraints = [
            models.UniqueConstraint(fields=["virtual_service", "name"], name="rule_unique_name_in_service"),
            models.UniqueConstraint(
                fields=["virtual_service", "position"],
                name="rule_unique_position_in_service",
                deferrable=models.Deferrable.DEFERRED,
            ),
        ]

    def __str__(self):
        return f"{self.virtual_service.name}/{self.name}"
