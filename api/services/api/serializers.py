"""Serializers for virtual services, pools, members and health checks."""

from rest_framework import serializers

from compiler.verify import listeners_clash
from fulcrum.serializers import StrictModelSerializer
from services.models import HealthCheck, Member, Pool, VirtualService


class HealthCheckSerializer(StrictModelSerializer):
    class Meta:
        model = HealthCheck
        fields = ["id", "pool", "type", "path", "expected_status", "host", "interval_ms", "timeout_ms", "rise", "fall"]

    def validate(self, attrs):
        values = self.merged(attrs, "timeout_ms", "interval_ms")
        if values["timeout_ms"] > values["interval_ms"]:
            raise serializers.ValidationError({"timeout_ms": ["Must not exceed interval_ms."]})
        return attrs


class MemberSerializer(StrictModelSerializer):
    class Meta:
        model = Member
        fields = ["id", "pool", "name", "address", "port", "weight", "state"]
        validators = []  # uniqueness is checked in validate() to answer with field errors

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
        return attrs


class PoolSerializer(StrictModelSerializer):
    members = MemberSerializer(many=True, read_only=True)
    health_check = HealthCheckSerializer(read_only=True, allow_null=True)

    class Meta:
        model = Pool
        fields = ["id", "name", "algorithm", "description", "members", "health_check"]


class VirtualServiceSerializer(StrictModelSerializer):
    class Meta:
        model = VirtualService
        fields = ["id", "name", "vip", "port", "protocol", "enabled", "default_pool", "description"]
        validators = []  # listener clashes are checked in validate() to answer with field errors

    def validate(self, attrs):
        values = self.merged(attrs, "vip", "port", "protocol", "default_pool")
        self._refuse_listener_clash(values["vip"], values["port"])
        self._refuse_mixed_pool(values["default_pool"], values["protocol"])
        return attrs

    def _others(self):
        others = VirtualService.objects.all()
        return others if self.instance is None else others.exclude(pk=self.instance.pk)

    def _refuse_listener_clash(self, vip, port):
        for other in self._others().filter(port=port):
            if listeners_clash(vip, port, other.vip, other.port):
                raise serializers.ValidationError(
                    {"vip": [f"{vip}:{port} clashes with virtual service {other.name} ({other.vip}:{other.port})."]}
                )

    def _refuse_mixed_pool(self, pool, protocol):
        other = self._others().filter(default_pool=pool).exclude(protocol=protocol).first()
        if other:
            raise serializers.ValidationError(
                {
                    "default_pool": [
                        f"Pool {pool} serves {other.protocol} virtual service {other.name}; a pool serves one protocol."
                    ]
                }
            )
