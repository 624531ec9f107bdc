"""Many rules of one virtual service in one request and one transaction: add them after the
service's own, or make them the service's whole ordered list (which also reorders), or
delete some by name. For operators with thousands of rules and for ``fulcrum rule import``.

Every row is checked as a single rule is (the same fields and words), then the service with
its new rules is verified once by the compiler, in its neighbourhood (freeze_around). One bad
row refuses the whole batch: the answer names the row (its index in ``rules``, from 0) and
the field, and nothing is stored.
"""

from django.db import transaction
from rest_framework import serializers

from compiler import rules
from fulcrum.serializers import StrictSerializer
from services import snapshot
from services.api.serializers import RuleSerializer, compiler_check
from services.models import Pool, Rule, VirtualService

# bulk-delete renumbers the rest in batches: Django's update of many rows is one CASE per
# column with a branch per row, which PostgreSQL walks for every row.
UPDATE_BATCH = 200
ROW_FIELDS = [f for f in RuleSerializer.Meta.fields if f not in ("id", "virtual_service", "position", "pool")]


class BulkRuleRowSerializer(RuleSerializer):
    """One row: a rule's fields without its service and position (the batch gives those), its
    pool by id. Only the row's own fields are checked here; the batch checks the rest."""

    pool = serializers.IntegerField(min_value=1, required=False, allow_null=True, help_text="The pool's id.")
    position = None  # the row's place in the batch

    class Meta(RuleSerializer.Meta):
        fields = [*ROW_FIELDS, "pool"]

    def get_fields(self):
        fields = super().get_fields()
        fields.pop("version", None)  # a batch is checked as a whole, not rule by rule
        return fields

    def validate(self, attrs):
        return attrs


class BulkRulesSerializer(StrictSerializer):
    """Rules of one virtual service, in order; each row as a single rule's fields."""

    virtual_service = serializers.PrimaryKeyRelatedField(queryset=VirtualService.objects.all())
    mode = serializers.ChoiceField(
        choices=["append", "replace"],
        default="append",
        help_text="append: after the service's rules, in this order. replace: these become the service's "
        "rules, in this order; rules of the same name keep their id, the others go.",
    )
    rules = BulkRuleRowSerializer(many=True, max_length=rules.RULES_PER_SERVICE_MAX, allow_empty=True)

    def to_internal_value(self, data):
        try:
            return super().to_internal_value(data)
        except serializers.ValidationError as err:
            raise serializers.ValidationError(_rows_named(err.detail)) from err

    def validate(self, attrs):
        service, rows = attrs["virtual_service"], attrs["rules"]
        errors = {}
        seen = {}
        kept = [] if attrs["mode"] == "replace" else list(service.rules.order_by("position"))
        taken = {r.name: "the service" for r in kept}
        for index, row in enumerate(rows):
            where = taken.get(row["name"]) or seen.get(row["name"])
            if where is not None:
                errors.setdefault(str(index), {})["name"] = [f"{row['name']} is already a rule of {where}."]
            seen[row["name"]] = f"row {index}"
        wanted = {row["pool"] for row in rows if row.get("pool")}
        pools = {p.pk: p for p in Pool.objects.filter(pk__in=wanted)}
        for index, row in enumerate(rows):
            if row.get("pool") and row["pool"] not in pools:
                errors.setdefault(str(index), {})["pool"] = [f'Invalid pk "{row["pool"]}" - object does not exist.']
            row["pool"] = pools.get(row.get("pool"))
        if errors:
            raise serializers.ValidationError({"rules": errors})
        self._check(service, kept, rows, list(pools))
        return attrs

    @staticmethod
    def _check(service, kept, rows, pool_ids):
        """The compiler's verify on the service with its rules as they will be."""
        scope = {"services": [service.pk], "pools": pool_ids}
        frozen = snapshot.freeze_around(**scope)
        data = next(s for s in frozen["virtual_services"] if s["name"] == service.name)
        data["rules"] = [snapshot.rule_dict(r) for r in kept] + [snapshot.rule_dict(Rule(**row)) for row in rows]
        index = {row["name"]: str(i) for i, row in enumerate(rows)}
        try:
            compiler_check(frozen, f"virtual-services/{service.name}/rules", scope)
        except serializers.ValidationError as err:
            raise serializers.ValidationError(_by_row(err.detail, index)) from err

    @transaction.atomic
    def save(self):
        service, rows, mode = (self.validated_data[k] for k in ("virtual_service", "rules", "mode"))
        siblings = Rule.objects.select_for_update().filter(virtual_service=service)
        existing = {r.name: r for r in siblings}
        start = 0 if mode == "replace" else len(existing)
        made = []
        for position, row in enumerate(rows, start):
            rule = Rule(virtual_service=service, position=position, **row)
            kept = existing.get(row["name"]) if mode == "replace" else None
            if kept is not None:  # the same rule, changed: its id, its version raised
                rule.pk, rule.version = kept.pk, kept.version + 1
            made.append(rule)
        updated = sum(rule.pk is not None for rule in made)
        counts = {"created": len(made) - updated, "updated": updated, "deleted": 0}
        if mode == "replace":
            # Rewritten rather than updated in place: Django's update of many rows is one CASE
            # per column with a branch per row (5,000 rules: minutes), a delete and an insert
            # take a second.
            Rule.objects.filter(virtual_service=service).delete()
            counts["deleted"] = len(existing) - updated
        Rule.objects.bulk_create(made)
        return {"virtual_service": service.pk, "rules": Rule.objects.filter(virtual_service=service).count(), **counts}


class BulkRulesResultSerializer(serializers.Serializer):
    """What a batch did to the service's rules."""

    virtual_service = serializers.IntegerField()
    rules = serializers.IntegerField(help_text="The service's rules now.")
    created = serializers.IntegerField()
    updated = serializers.IntegerField()
    deleted = serializers.IntegerField()


class BulkRuleDeleteSerializer(StrictSerializer):
    """Rules of one virtual service to delete, by name."""

    virtual_service = serializers.PrimaryKeyRelatedField(queryset=VirtualService.objects.all())
    names = serializers.ListField(
        child=serializers.CharField(max_length=63), max_length=rules.RULES_PER_SERVICE_MAX, allow_empty=False
    )

    def validate(self, attrs):
        service, names = attrs["virtual_service"], attrs["names"]
        present = set(Rule.objects.filter(virtual_service=service, name__in=names).values_list("name", flat=True))
        missing = [name for name in names if name not in present]
        if missing:
            raise serializers.ValidationError(
                {"names": [f"{service.name} has no rule named {', '.join(missing[:10])}."]}
            )
        return attrs

    @transaction.atomic
    def save(self):
        service, names = self.validated_data["virtual_service"], self.validated_data["names"]
        siblings = list(Rule.objects.select_for_update().filter(virtual_service=service).order_by("position"))
        deleted = Rule.objects.filter(virtual_service=service, name__in=names).delete()[0]
        gone = set(names)
        rest = [r for r in siblings if r.name not in gone]
        for position, rule in enumerate(rest):
            rule.position = position
        Rule.objects.bulk_update(rest, ["position"], batch_size=UPDATE_BATCH)
        return {"virtual_service": service.pk, "rules": len(rest), "created": 0, "updated": 0, "deleted": deleted}


def _rows_named(detail):
    """DRF's per-row errors ([{}, {...}, ...], or {index: {...}}) as {"index": errors} of the
    bad rows only."""
    rows = detail.get("rules") if isinstance(detail, dict) else None
    if isinstance(rows, list) and rows and all(isinstance(row, dict) for row in rows):
        rows = dict(enumerate(rows))
    if isinstance(rows, dict):
        detail = {**detail, "rules": {str(i): row for i, row in rows.items() if row}}
    return detail


def _by_row(detail, index):
    """compiler_check's errors under a service's rules ({rule name: ["field: message"]}) by
    the row that made the rule."""
    out, rows = {}, {}
    for key, messages in detail.items():
        if key in index:
            for message in messages:
                field, _, text = str(message).partition(": ")
                field, text = (field, text) if text else ("non_field_errors", field)
                rows.setdefault(index[key], {}).setdefault(field.split("/")[0], []).append(text)
        else:
            out.setdefault("non_field_errors", []).extend(str(m) for m in messages)
    if rows:
        out["rules"] = rows
    return out
