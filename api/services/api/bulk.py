"""Many children of one parent in one request and one transaction: a virtual service's rules
(in order) and a pool's members. ``append`` adds them after the parent's own; ``replace`` makes
them the parent's whole list (children of the same name keep their id, the others go; for rules
this also reorders); ``bulk-delete`` deletes some by name. For operators with thousands of them
and for ``fulcrum rule import``.

Every row is checked as a single child is (the same fields and words), then the parent with its
new children is verified once by the compiler, in its neighbourhood (freeze_around). One bad
row refuses the whole batch: the answer names the row (its index in the list, from 0) and the
field, and nothing is stored.
"""

from django.db import router, transaction
from django.db.models.deletion import Collector
from rest_framework import serializers

from compiler import rules
from fulcrum.serializers import StrictSerializer
from services.api.serializers import MemberSerializer, RuleSerializer, compiler_check
from services.models import Member, Pool, Rule, VirtualService
from snapshots import freeze as snapshot

# bulk-delete renumbers the rest in batches: Django's update of many rows is one CASE per
# column with a branch per row, which PostgreSQL walks for every row.
UPDATE_BATCH = 200
# A pool's members in one batch: more than any pool has (HAProxy's servers per backend are
# bounded by memory, not by a number).
MEMBERS_PER_BATCH_MAX = 10_000
MODE_HELP = (
    "append: after the {parent}'s {rows}, in this order. replace: these become the {parent}'s {rows}"
    "{ordered}; {rows} of the same name keep their id, the others go."
)


def _row_serializer(single, name, drop, **declared):
    """A row of a batch: ``single``'s fields without ``drop`` (the batch gives those) and its
    version, with ``declared`` fields in place of single's. Only the row's own fields are
    checked here; the batch checks the rest."""

    class Meta(single.Meta):
        fields = [*(f for f in single.Meta.fields if f not in drop and f not in declared), *declared]

    def get_fields(self):
        fields = super(row, self).get_fields()
        fields.pop("version", None)  # a batch is checked as a whole, not child by child
        return fields

    def validate(self, attrs):
        return attrs

    gone = {f: None for f in drop if f in single._declared_fields}  # DRF's table of declared fields
    doc = (
        f"One row of a batch: a {single.Meta.model._meta.verbose_name}'s fields but {', '.join(drop)} (the batch "
        "gives those). Only the row's own fields are checked here; the batch checks the rest."
    )
    methods = {"__doc__": doc, "Meta": Meta, "get_fields": get_fields, "validate": validate}
    row = type(name, (single,), {**methods, **gone, **declared})
    return row


class BulkRowsSerializer(StrictSerializer):
    """The batch of one kind of child: each kind names its model, its parent field, its list
    field, and the fields that are unique among one parent's children."""

    model = None
    parent_field = ""  # the children's field that names the parent, and the request's
    rows_field = ""  # the request's list of rows
    noun = ""  # one child, in messages
    parent_noun = ""  # its parent, in messages
    ordered = False  # the children have positions (rules)
    unique = {"name": ("name",)}  # field: the fields whose values one parent's children never share

    def to_internal_value(self, data):
        try:
            return super().to_internal_value(data)
        except serializers.ValidationError as err:
            raise serializers.ValidationError(_rows_named(err.detail, self.rows_field)) from err

    def validate(self, attrs):
        parent, rows = attrs[self.parent_field], attrs[self.rows_field]
        found = self.model.objects.filter(**{self.parent_field: parent})
        kept = [] if attrs["mode"] == "replace" else list(found.order_by("position") if self.ordered else found)
        errors = {}
        for field, together in self.unique.items():
            label = ":".join
            taken = {label(str(getattr(c, f)) for f in together): self.parent_noun for c in kept}
            for index, row in enumerate(rows):
                value = label(str(row.get(f)) for f in together)
                where = taken.get(value)
                if where is not None:
                    errors.setdefault(str(index), {})[field] = [f"{value} is already a {self.noun} of {where}."]
                taken.setdefault(value, f"row {index}")
        self.resolve(rows, errors)
        if errors:
            raise serializers.ValidationError({self.rows_field: errors})
        try:
            self.check(parent, kept, rows)
        except serializers.ValidationError as err:
            raise serializers.ValidationError(_by_row(err.detail, rows, self.rows_field)) from err
        return attrs

    def resolve(self, rows, errors):
        """Turn the rows' references into objects, adding errors by row."""

    def check(self, parent, kept, rows):
        """The compiler's verify on the parent with its children as they will be."""
        raise NotImplementedError

    @transaction.atomic
    def save(self):
        parent, rows, mode = (self.validated_data[k] for k in (self.parent_field, self.rows_field, "mode"))
        existing = {c.name: c for c in self.model.objects.select_for_update().filter(**{self.parent_field: parent})}
        start = 0 if mode == "replace" else len(existing)
        made = []
        for position, row in enumerate(rows, start):
            child = self.model(**{self.parent_field: parent}, **({"position": position} if self.ordered else {}), **row)
            kept = existing.get(row["name"]) if mode == "replace" else None
            if kept is not None:  # the same child, changed: its id, its version raised
                child.pk, child.version = kept.pk, kept.version + 1
            made.append(child)
        updated = sum(child.pk is not None for child in made)
        counts = {"created": len(made) - updated, "updated": updated, "deleted": 0}
        if mode == "replace":
            # Rewritten rather than updated in place: Django's update of many rows is one CASE
            # per column with a branch per row (5,000 rules: minutes), a delete and an insert
            # take a second.
            _delete(existing.values(), self.parent_field, parent)
            counts["deleted"] = len(existing) - updated
        self.model.objects.bulk_create(made)
        total = self.model.objects.filter(**{self.parent_field: parent}).count()
        return {self.parent_field: parent.pk, self.rows_field: total, **counts}


class BulkRulesSerializer(BulkRowsSerializer):
    """Rules of one virtual service, in order; each row as a single rule's fields, its pool by id."""

    model, parent_field, rows_field, noun, parent_noun, ordered = (
        Rule,
        "virtual_service",
        "rules",
        "rule",
        "the service",
        True,
    )
    virtual_service = serializers.PrimaryKeyRelatedField(queryset=VirtualService.objects.all())
    mode = serializers.ChoiceField(
        choices=["append", "replace"],
        default="append",
        help_text=MODE_HELP.format(parent="service", rows="rules", ordered=", in this order"),
    )
    rules = _row_serializer(
        RuleSerializer,
        "BulkRuleRowSerializer",
        ("id", "virtual_service", "position"),
        pool=serializers.IntegerField(min_value=1, required=False, allow_null=True, help_text="The pool's id."),
    )(many=True, max_length=rules.RULES_PER_SERVICE_MAX, allow_empty=True)

    def resolve(self, rows, errors):
        wanted = {row["pool"] for row in rows if row.get("pool")}
        self._pools = {p.pk: p for p in Pool.objects.filter(pk__in=wanted)}
        for index, row in enumerate(rows):
            if row.get("pool") and row["pool"] not in self._pools:
                errors.setdefault(str(index), {})["pool"] = [f'Invalid pk "{row["pool"]}" - object does not exist.']
            row["pool"] = self._pools.get(row.get("pool"))

    def check(self, service, kept, rows):
        scope = {"services": [service.pk], "pools": list(self._pools)}
        frozen = snapshot.freeze_around(**scope)
        data = next(s for s in frozen["virtual_services"] if s["name"] == service.name)
        data["rules"] = [snapshot.rule_dict(r) for r in kept] + [snapshot.rule_dict(Rule(**row)) for row in rows]
        compiler_check(frozen, f"virtual-services/{service.name}/rules", scope)


class BulkMembersSerializer(BulkRowsSerializer):
    """Members of one pool; each row as a single member's fields."""

    model, parent_field, rows_field = Member, "pool", "members"
    noun, parent_noun = "member", "the pool"
    unique = {"name": ("name",), "address": ("address", "port")}
    pool = serializers.PrimaryKeyRelatedField(queryset=Pool.objects.all())
    mode = serializers.ChoiceField(
        choices=["append", "replace"],
        default="append",
        help_text=MODE_HELP.format(parent="pool", rows="members", ordered=""),
    )
    members = _row_serializer(MemberSerializer, "BulkMemberRowSerializer", ("id", "pool", "live"))(
        many=True, max_length=MEMBERS_PER_BATCH_MAX, allow_empty=True
    )

    def check(self, pool, kept, rows):
        scope = {"pools": [pool.pk]}
        frozen = snapshot.freeze_around(**scope)
        data = next(p for p in frozen["pools"] if p["name"] == pool.name)
        data["members"] = [snapshot.member_dict(m) for m in [*kept, *(Member(**row) for row in rows)]]
        compiler_check(frozen, f"pools/{pool.name}/members", scope)


def _result_serializer(name, parent, rows):
    fields = {
        parent: serializers.IntegerField(),
        rows: serializers.IntegerField(help_text=f"The {parent.replace('_', ' ')}'s {rows} now."),
        "created": serializers.IntegerField(),
        "updated": serializers.IntegerField(),
        "deleted": serializers.IntegerField(),
    }
    return type(name, (serializers.Serializer,), {"__doc__": f"What a batch did to the {rows}.", **fields})


BulkRulesResultSerializer = _result_serializer("BulkRulesResultSerializer", "virtual_service", "rules")
BulkMembersResultSerializer = _result_serializer("BulkMembersResultSerializer", "pool", "members")


class BulkDeleteSerializer(StrictSerializer):
    """Children of one parent to delete, by name (the kind's batch: ``batch``)."""

    batch = None

    def validate(self, attrs):
        kind = self.batch
        parent, names = attrs[kind.parent_field], attrs["names"]
        present = set(
            kind.model.objects.filter(**{kind.parent_field: parent, "name__in": names}).values_list("name", flat=True)
        )
        missing = [name for name in names if name not in present]
        if missing:
            raise serializers.ValidationError(
                {"names": [f"{parent.name} has no {kind.noun} named {', '.join(missing[:10])}."]}
            )
        return attrs

    @transaction.atomic
    def save(self):
        kind = self.batch
        parent, names = self.validated_data[kind.parent_field], self.validated_data["names"]
        found = kind.model.objects.select_for_update().filter(**{kind.parent_field: parent})
        siblings = list(found.order_by("position") if kind.ordered else found)
        gone = set(names)
        deleted = _delete([c for c in siblings if c.name in gone], kind.parent_field, parent)
        rest = len(siblings) - deleted
        if kind.ordered:
            kept = [c for c in siblings if c.name not in gone]
            for position, child in enumerate(kept):
                child.position = position
            kind.model.objects.bulk_update(kept, ["position"], batch_size=UPDATE_BATCH)
        return {kind.parent_field: parent.pk, kind.rows_field: rest, "created": 0, "updated": 0, "deleted": deleted}


class BulkRuleDeleteSerializer(BulkDeleteSerializer):
    """Rules of one virtual service to delete, by name; the rest keep their order."""

    batch = BulkRulesSerializer
    virtual_service = serializers.PrimaryKeyRelatedField(queryset=VirtualService.objects.all())
    names = serializers.ListField(
        child=serializers.CharField(max_length=63), max_length=rules.RULES_PER_SERVICE_MAX, allow_empty=False
    )


class BulkMemberDeleteSerializer(BulkDeleteSerializer):
    """Members of one pool to delete, by name."""

    batch = BulkMembersSerializer
    pool = serializers.PrimaryKeyRelatedField(queryset=Pool.objects.all())
    names = serializers.ListField(
        child=serializers.CharField(max_length=63), max_length=MEMBERS_PER_BATCH_MAX, allow_empty=False
    )


def _delete(children, parent_field, parent):
    """Delete ``children`` (fetched, locked) of ``parent``; how many. Each is named in the
    audit after its parent: given here, not fetched once per child (5,000 rules: 5,000
    queries, most of a replace's time, when a queryset's delete fetched them again)."""
    children = list(children)
    for child in children:
        setattr(child, parent_field, parent)
    if not children:
        return 0
    model = type(children[0])
    collector = Collector(using=router.db_for_write(model))
    collector.collect(children)
    return collector.delete()[1].get(model._meta.label, 0)


def _rows_named(detail, field):
    """DRF's per-row errors under ``field`` ([{}, {...}, ...], or {index: {...}}) as
    {"index": errors} of the bad rows only."""
    rows = detail.get(field) if isinstance(detail, dict) else None
    if isinstance(rows, list) and rows and all(isinstance(row, dict) for row in rows):
        rows = dict(enumerate(rows))
    if isinstance(rows, dict):
        detail = {**detail, field: {str(i): row for i, row in rows.items() if row}}
    return detail


def _by_row(detail, rows, field):
    """compiler_check's errors under a parent's children ({child name: ["field: message"]}) by
    the row that made the child, under ``field``."""
    index = {row["name"]: str(i) for i, row in enumerate(rows)}
    out, by_row = {}, {}
    for key, messages in detail.items():
        if key in index:
            for message in messages:
                name, _, text = str(message).partition(": ")
                name, text = (name, text) if text else ("non_field_errors", name)
                by_row.setdefault(index[key], {}).setdefault(name.split("/")[0], []).append(text)
        else:
            out.setdefault("non_field_errors", []).extend(str(m) for m in messages)
    if by_row:
        out[field] = by_row
    return out
