"""Serializers for virtual services, rules, pools, members and health checks.

Shapes and single-field rules are declared here; everything else is checked by the
compiler itself (``compiler_check``): the candidate object is put into a snapshot of the
stored objects it can affect (snapshots.freeze.freeze_around: its service, pools, the
services sharing them or its addresses) and verified, so the API accepts exactly what the
compiler can render, at the cost of what the change touches.
"""

from django.db import transaction
from django.db.models import F
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from compiler import VerifyError, catalog, rules, snapshot_from_dict, verify
from compiler.advice import service_warnings
from compiler.facts import listeners_clash, transport
from compiler.verify import port_end_problems as verify_port_end
from compiler.verify import vip_problems as verify_vip
from fulcrum.concurrency import VersionedSerializerMixin
from fulcrum.serializers import StrictModelSerializer, StrictSerializer
from services.models import HealthCheck, Member, Pool, Rule, VirtualService
from snapshots import freeze as snapshot


def compiler_check(candidate, prefix, scope, renames=None, related=None, echoes=()):
    """Verify the snapshot ``candidate``, made by snapshots.freeze.freeze_around(**scope) and
    changed; raise field errors for problems under ``prefix``.

    ``renames`` maps snapshot field names to API field names; ``related`` maps the path of
    another object to the field that refers to it. Any other problem elsewhere (another
    object this change breaks) is a non-field error, unless it was there before the change
    or its path starts with one of ``echoes`` while this object has errors of its own (the
    other side of a clash the compiler reports on both objects).
    """
    try:
        verify(snapshot_from_dict(snapshot.with_certificates(candidate)))
    except VerifyError as err:
        problems = err.problems
    else:
        return
    renames, related = renames or {}, related or {}
    errors, elsewhere = {}, []
    for path, message in problems:
        if path in related:
            errors.setdefault(related[path], []).append(message)
        elif path == prefix or path.startswith(prefix + "/"):
            field, _, rest = path[len(prefix) + 1 :].partition("/")
            field = renames.get(field, field) or "non_field_errors"
            errors.setdefault(field, []).append(f"{rest}: {message}" if rest else message)
        else:
            elsewhere.append((path, message))
    if errors:
        elsewhere = [(path, message) for path, message in elsewhere if not path.startswith(tuple(echoes))]
    if elsewhere:
        try:
            verify(snapshot_from_dict(snapshot.freeze_around(**scope)))
            before = set()
        except VerifyError as err:
            before = set(err.problems)
        new = [f"{path}: {message}" for path, message in elsewhere if (path, message) not in before]
        if new:
            errors.setdefault("non_field_errors", []).extend(new)
    if errors:
        raise serializers.ValidationError(errors)


def service_advice(services=None, frozen=None):
    """{service name: [warning]} from the stored objects and the nodes' latest status: of
    every service, or of ``services`` (ids: one object's answer, a page of a list) and their
    neighbourhood only, or of ``frozen``, that neighbourhood as a write just verified and
    stored it."""
    from cluster.models import Node  # cluster depends on services, not the other way round

    nodes = {n.name: {"networks": n.networks, "ipvs": n.ipvs_status} for n in Node.objects.all()}
    try:
        if frozen is None:
            frozen = snapshot.current() if services is None else snapshot.freeze_around(services=services)
        snap = snapshot_from_dict(frozen)
    except VerifyError:
        return {}
    return service_warnings(snap, nodes)


def _candidate_instance(serializer, attrs, model):
    """An unsaved copy of the object as it will be stored (M2M fields left out)."""
    current = {}
    if serializer.instance is not None:
        for field in model._meta.concrete_fields:
            current[field.attname] = getattr(serializer.instance, field.attname)
    obj = model(**current)
    many = {f.name for f in model._meta.many_to_many}
    for name, value in attrs.items():
        if name not in many:
            setattr(obj, name, value)
    return obj


class HealthCheckSerializer(VersionedSerializerMixin, StrictModelSerializer):
    class Meta:
        model = HealthCheck
        fields = ["id", "pool", *snapshot.HEALTH_CHECK_FIELDS]

    def validate(self, attrs):
        values = self.merged(attrs, "timeout_ms", "interval_ms")
        if values["timeout_ms"] > values["interval_ms"]:
            raise serializers.ValidationError({"timeout_ms": ["Must not exceed interval_ms."]})
        check = _candidate_instance(self, attrs, HealthCheck)
        pool = check.pool
        scope = {"pools": [pool.pk]}
        frozen = snapshot.freeze_around(**scope)
        pool_data = {**snapshot.pool_dict(pool), "health_check": snapshot.health_check_dict(check)}
        frozen["pools"] = snapshot.replace(frozen["pools"], pool.name, pool_data)
        compiler_check(frozen, f"pools/{pool.name}/health_check", scope)
        return attrs


def member_live_status():
    """{(pool, member): [live state on each node]} from the nodes' latest status."""
    from cluster.models import Node  # cluster depends on services, not the other way round

    live = {}
    for node in Node.objects.all():
        for entry in node.member_status:
            key = (entry.get("pool"), entry.get("member"))
            live.setdefault(key, []).append({"node": node.name, "reported_at": node.status_at, **entry})
    return live


class MemberFiguresSerializer(StrictSerializer):
    """What a node agent reports of one member of a dynamic-least-load pool."""

    layer = serializers.ChoiceField(choices=["ipvs", "haproxy"])
    load_milli = serializers.IntegerField(
        min_value=0, allow_null=True, help_text="Smoothed load; 1000 = one fully busy server."
    )
    load_at = serializers.DateTimeField(allow_null=True, help_text="When the load was last read.")
    connections = serializers.IntegerField(min_value=0, allow_null=True)
    weight = serializers.IntegerField(allow_null=True, help_text="The weight in force in the scheduler.")
    feed = serializers.CharField(
        max_length=32,
        allow_blank=True,
        help_text="How the load reaches the scheduler: ip_vs_dllc, wlc weights (module missing), "
        "haproxy agent-check; empty when it does not.",
    )
    message = serializers.CharField(max_length=1000, allow_blank=True)


class MemberLiveSerializer(MemberFiguresSerializer):
    """A member's figures on one node, as the member's ``live`` shows them."""

    node = serializers.CharField()
    reported_at = serializers.DateTimeField(allow_null=True, help_text="When the node sent them.")


class MemberSerializer(VersionedSerializerMixin, StrictModelSerializer):
    live = serializers.SerializerMethodField(
        help_text="dynamic-least-load pools: the member's load, connections and weight in force on each node, "
        "as the node agents last reported them."
    )

    class Meta:
        model = Member
        fields = ["id", "pool", *snapshot.MEMBER_FIELDS, "live"]
        validators = []  # uniqueness is checked in validate() to answer with field errors

    @extend_schema_field(MemberLiveSerializer(many=True))
    def get_live(self, instance):
        live = self.context.get("_live")
        if live is None:  # once per request: a list shares one context
            live = self.context["_live"] = member_live_status()
        return MemberLiveSerializer(live.get((instance.pool.name, instance.name), []), many=True).data

    def validate(self, attrs):
        pool, name, address, port = self.merged(attrs, "pool", "name", "address", "port").values()
        self.unique_error(Member, "name", f"Pool {pool} already has a member named {name}.", pool=pool, name=name)
        self.unique_error(
            Member,
            "address",
            f"{address}:{port} is already a member of pool {pool}.",
            pool=pool,
            address=address,
            port=port,
        )
        member = _candidate_instance(self, attrs, Member)
        scope = {"pools": [pool.pk, *([self.instance.pool_id] if self.instance is not None else [])]}
        frozen = snapshot.freeze_around(**scope)
        if self.instance is not None and self.instance.pool_id != pool.pk:  # it leaves its pool
            left = next(p for p in frozen["pools"] if p["name"] == self.instance.pool.name)
            left["members"] = [m for m in left["members"] if m["name"] != self.instance.name]
        pool_data = next(p for p in frozen["pools"] if p["name"] == pool.name)
        old = self.instance.name if self.instance is not None and self.instance.pool_id == pool.pk else None
        pool_data["members"] = snapshot.replace(pool_data["members"], old, snapshot.member_dict(member))
        compiler_check(frozen, f"pools/{pool.name}/members/{member.name}", scope)
        return attrs


class MemberRuntimeSerializer(StrictSerializer):
    """A runtime change: either field or both."""

    weight = serializers.IntegerField(min_value=rules.WEIGHT_MIN, max_value=rules.WEIGHT_MAX, required=False)
    state = serializers.ChoiceField(choices=rules.MEMBER_STATES, required=False)

    def validate(self, attrs):
        if not attrs:
            raise serializers.ValidationError({"non_field_errors": ["Give weight, state or both."]})
        return attrs


class MemberRuntimeResultSerializer(serializers.Serializer):
    member = MemberSerializer()
    revision = serializers.IntegerField(help_text="The revision that carries the change.")


class PersistenceSerializer(StrictSerializer):
    """How a client keeps its server. Fields that do not apply to ``type`` are ignored."""

    type = serializers.ChoiceField(choices=catalog.labels(catalog.PERSISTENCE_TYPES), default="none")
    cookie_name = serializers.CharField(max_length=64, default="SERVERID")
    indirect = serializers.BooleanField(default=True)
    nocache = serializers.BooleanField(default=True)
    httponly = serializers.BooleanField(default=True)
    secure = serializers.BooleanField(default=False)
    max_idle_s = serializers.IntegerField(min_value=0, default=0)
    max_life_s = serializers.IntegerField(min_value=0, default=0)
    header_name = serializers.CharField(max_length=64, default="", allow_blank=True)
    timeout_s = serializers.IntegerField(min_value=1, default=1800)
    ipv4_mask = serializers.IntegerField(min_value=1, max_value=32, default=32)
    ipv6_mask = serializers.IntegerField(min_value=1, max_value=128, default=128)
    table_size = serializers.IntegerField(min_value=1, default=100_000)
    fallback_source = serializers.BooleanField(default=False)


class PoolSerializer(VersionedSerializerMixin, StrictModelSerializer):
    members = MemberSerializer(many=True, read_only=True)
    health_check = HealthCheckSerializer(read_only=True, allow_null=True)
    persistence = PersistenceSerializer(required=False)

    class Meta:
        model = Pool
        fields = [
            "id",
            "name",
            "algorithm",
            "description",
            "persistence",
            "http_reuse",
            "pool_max_conn",
            "pool_purge_delay_ms",
            "tls",
            "tls_verify",
            "tls_ca",
            "tls_sni",
            "proxy_protocol",
            "connect_timeout_ms",
            "server_timeout_ms",
            "queue_timeout_ms",
            "maintenance_page",
            "hash_port",
            "hash_fallback",
            "on_failure",
            "feedback_agent_port",
            "feedback_http_port",
            "feedback_interval_ms",
            "members",
            "health_check",
        ]

    def to_representation(self, instance):
        data = super().to_representation(instance)
        # Stored persistence may predate fields added since; show it with their defaults.
        defaults = {name: field.default for name, field in PersistenceSerializer().fields.items()}
        data["persistence"] = {**defaults, **instance.persistence}
        return data

    def validate(self, attrs):
        pool = _candidate_instance(self, attrs, Pool)
        scope = {"pools": [self.instance.pk] if self.instance is not None else []}
        frozen = snapshot.freeze_around(**scope)
        old = self.instance.name if self.instance is not None else None
        members = list(self.instance.members.all()) if self.instance is not None else []
        check = getattr(self.instance, "health_check", None) if self.instance is not None else None
        data = snapshot.pool_dict(pool, members=members, check=check)
        frozen["pools"] = snapshot.replace(frozen["pools"], old, data)
        _rename_references(frozen, "pool", old, pool.name)
        compiler_check(frozen, f"pools/{pool.name}", scope)
        return attrs


def _rename_references(frozen, kind, old, new):
    """Follow a rename through the snapshot so references stay valid while checking."""
    if old is None or old == new:
        return
    for service in frozen["virtual_services"]:
        if kind == "pool":
            service["default_pool"] = new if service["default_pool"] == old else service["default_pool"]
            for rule in service["rules"]:
                rule["pool"] = new if rule["pool"] == old else rule["pool"]


class ConditionSerializer(StrictSerializer):
    kind = serializers.ChoiceField(choices=rules.CONDITION_KINDS)
    values = serializers.ListField(
        child=serializers.CharField(max_length=rules.VALUE_MAX),
        max_length=rules.VALUES_PER_CONDITION_MAX,
        default=list,
        help_text="Any of them matches. Empty for the *_present kinds.",
    )
    name = serializers.CharField(
        max_length=64, default="", allow_blank=True, help_text="The header, cookie or query parameter name."
    )
    negate = serializers.BooleanField(default=False)


class RuleSerializer(VersionedSerializerMixin, StrictModelSerializer):
    conditions = ConditionSerializer(many=True, help_text="All must match (AND).")
    position = serializers.IntegerField(
        min_value=0,
        max_value=rules.RULES_PER_SERVICE_MAX,
        required=False,
        help_text="0 is evaluated first. On create, omitted = last; others move down to make room.",
    )

    class Meta:
        model = Rule
        fields = [
            "id",
            "virtual_service",
            "position",
            "name",
            "enabled",
            "conditions",
            "action",
            "pool",
            "redirect_code",
            "redirect_location",
            "deny_status",
            "header_name",
            "header_value",
        ]
        validators = []  # uniqueness is checked in validate() to answer with field errors

    def validate(self, attrs):
        service, name = self.merged(attrs, "virtual_service", "name").values()
        if self.instance is not None and "virtual_service" in attrs and service != self.instance.virtual_service:
            raise serializers.ValidationError({"virtual_service": ["A rule cannot move to another service."]})
        self.unique_error(
            Rule, "name", f"Service {service} already has a rule named {name}.", virtual_service=service, name=name
        )
        rule = _candidate_instance(self, attrs, Rule)
        scope = {"services": [service.pk], "pools": [rule.pool_id] if rule.pool_id else []}
        frozen = snapshot.freeze_around(**scope)
        data = next(s for s in frozen["virtual_services"] if s["name"] == service.name)
        old = self.instance.name if self.instance is not None else None
        data["rules"] = snapshot.replace(data["rules"], old, snapshot.rule_dict(rule))
        compiler_check(frozen, f"virtual-services/{service.name}/rules/{rule.name}", scope)
        return attrs

    @transaction.atomic
    def create(self, validated_data):
        service = validated_data["virtual_service"]
        count = Rule.objects.select_for_update().filter(virtual_service=service).count()
        position = min(validated_data.get("position", count), count)
        Rule.objects.filter(virtual_service=service, position__gte=position).update(position=F("position") + 1)
        validated_data["position"] = position
        return super().create(validated_data)

    @transaction.atomic
    def update(self, instance, validated_data):
        if "position" in validated_data:
            siblings = Rule.objects.select_for_update().filter(virtual_service=instance.virtual_service)
            last = siblings.count() - 1
            new, old = min(validated_data["position"], last), instance.position
            if new > old:
                siblings.filter(position__gt=old, position__lte=new).update(position=F("position") - 1)
            elif new < old:
                siblings.filter(position__gte=new, position__lt=old).update(position=F("position") + 1)
            validated_data["position"] = new
        return super().update(instance, validated_data)


class ErrorPageSerializer(StrictSerializer):
    status = serializers.ChoiceField(choices=rules.ERROR_PAGE_STATUSES)
    content_type = serializers.CharField(max_length=100, default="text/html")
    body = serializers.CharField(max_length=rules.ERROR_PAGE_MAX, trim_whitespace=False)


class VirtualServiceSerializer(VersionedSerializerMixin, StrictModelSerializer):
    allow_cidrs = serializers.ListField(
        child=serializers.CharField(max_length=64), max_length=rules.CIDRS_MAX, required=False
    )
    deny_cidrs = serializers.ListField(
        child=serializers.CharField(max_length=64), max_length=rules.CIDRS_MAX, required=False
    )
    compression_types = serializers.ListField(
        child=serializers.CharField(max_length=rules.MIME_TYPE_MAX),
        max_length=rules.COMPRESSION_TYPES_MAX,
        required=False,
    )
    error_pages = ErrorPageSerializer(many=True, required=False)
    default_pool_name = serializers.CharField(
        source="default_pool.name",
        read_only=True,
        help_text="The default pool's name (a list shows it without the pools).",
    )
    warnings = serializers.SerializerMethodField(
        help_text="Things that will probably not work as meant (not errors): e.g. a NAT member the balancer "
        "has no network to, or a DR member on another subnet; from the nodes' reported networks."
    )

    # Where the compiler's snapshot names a field differently from the API.
    RENAMES = {"certificates": "default_certificate", "rate_limit": "rate_limit_requests", "rules": "non_field_errors"}

    class Meta:
        model = VirtualService
        fields = [
            "id",
            "name",
            "vip",
            "port",
            "port_end",
            "protocol",
            "forwarding",
            "one_packet_scheduling",
            "enabled",
            "default_pool",
            "default_pool_name",
            "description",
            "default_certificate",
            "sni_certificates",
            "tls_policy",
            "client_auth",
            "client_ca",
            "alpn_h2",
            "hsts_max_age_s",
            "redirect_https",
            "allow_cidrs",
            "deny_cidrs",
            "rate_limit_requests",
            "rate_limit_period_s",
            "conn_limit",
            "max_connections",
            "max_body_bytes",
            "compression",
            "compression_types",
            "forwarded",
            "client_timeout_ms",
            "http_request_timeout_ms",
            "keep_alive_timeout_ms",
            "error_pages",
            "warnings",
        ]
        validators = []  # listener clashes are checked in validate() to answer with field errors

    def validate(self, attrs):
        service = _candidate_instance(self, attrs, VirtualService)
        self._refuse_listener_clash(service)
        if "sni_certificates" in attrs:
            sni = attrs["sni_certificates"]
        else:
            sni = list(self.instance.sni_certificates.all()) if self.instance is not None else []
        scope = {
            "services": [self.instance.pk] if self.instance is not None else [],
            "pools": [service.default_pool_id] if service.default_pool_id else [],
            "vips": [str(service.vip)],
        }
        frozen = snapshot.freeze_around(**scope)
        old = self.instance.name if self.instance is not None else None
        rules_ = list(self.instance.rules.select_related("pool")) if self.instance is not None else []
        data = snapshot.service_dict(service, rules=rules_, sni_certificates=sni)
        frozen["virtual_services"] = snapshot.replace(frozen["virtual_services"], old, data)
        related = {f"pools/{service.default_pool.name}": "default_pool"} if service.default_pool_id else {}
        compiler_check(frozen, f"virtual-services/{service.name}", scope, self.RENAMES, related)
        self._verified = frozen  # the neighbourhood as it is once saved: the answer's warnings
        return attrs

    def _refuse_listener_clash(self, service):
        refuse_listener_clash(service, self.instance)

    @extend_schema_field(serializers.ListField(child=serializers.CharField()))
    def get_warnings(self, instance):
        advice = self.context.get("_advice")
        if advice is None:  # once per request: a page shares one context
            # One object's answer, or a page of a list: their neighbourhood tells enough (a page
            # of 10,000 services no longer reads them all).
            alone = self.parent is None
            verified = getattr(self, "_verified", None) if alone else None  # a write's, not frozen again
            shown = [instance] if alone else list(self.parent.instance)
            advice = self.context["_advice"] = service_advice([s.pk for s in shown], verified)
        return advice.get(instance.name, [])


def refuse_listener_clash(service, instance=None):
    """A field error on ``vip`` when ``service`` would take the packets of a saved service
    (other than ``instance``, the one being changed)."""
    near = snapshot.listening_on([str(service.vip)])  # by address, not every service
    others = VirtualService.objects.filter(pk__in=near).only("name", "vip", "port", "port_end", "protocol")
    if instance is not None:
        others = others.exclude(pk=instance.pk)
    for other in others:
        if listeners_clash(service, other):
            raise serializers.ValidationError(
                {"vip": [f"{_listener(service)} clashes with virtual service {other.name} ({_listener(other)})."]}
            )


class ListenerCheckSerializer(StrictModelSerializer):
    """A new service's name and listener, checked before its pool exists (the console's wizard
    asks at its listener step): the name is free, the VIP usable, the listener clashes with
    no saved service. Nothing is saved."""

    class Meta:
        model = VirtualService
        fields = ["name", "vip", "port", "port_end", "protocol"]
        validators = []  # the listener clash is checked in validate(), on the vip field

    def validate(self, attrs):
        service = VirtualService(**attrs)
        problems = [message for _path, message in verify_vip(str(service.vip), "vip")]
        if problems:
            raise serializers.ValidationError({"vip": problems})
        if problems := [message for _path, message in verify_port_end(service.port, service.port_end or 0, "")]:
            raise serializers.ValidationError({"port_end": problems})
        refuse_listener_clash(service)
        return attrs


def _listener(service):
    ports = f"{service.port}-{service.port_end}" if service.port_end else service.port
    return f"{service.vip}:{ports}/{transport(service.protocol)}"
