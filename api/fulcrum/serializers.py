"""Serializer bases shared by every app."""

from django.db import transaction
from rest_framework import serializers


class _Strict:
    """Refuse unknown fields instead of silently ignoring them, and values of the wrong JSON
    type instead of converting them (DRF takes 5 for a string and "5" for a number): a
    client gets exactly the types openapi.yaml describes, or a 400 on the field.

    ``ignore_unknown`` (``AgentReport``): unknown fields are left out rather than refused."""

    ignore_unknown = False

    def to_internal_value(self, data):
        if isinstance(data, dict):
            unknown = sorted(set(data) - set(self.fields))
            if unknown and self.ignore_unknown:
                data = {name: value for name, value in data.items() if name in self.fields}
            elif unknown:
                raise serializers.ValidationError({name: ["Unknown field."] for name in unknown})
            errors = {name: error for name, value in data.items() if (error := type_error(self.fields[name], value))}
            if errors:
                raise serializers.ValidationError(errors)
        return super().to_internal_value(data)


class StrictSerializer(_Strict, serializers.Serializer):
    """A plain serializer (e.g. the shape of a JSON column) that refuses unknown fields."""


class AgentReport:
    """Sent by a node's agent. Fields this API does not know are left out, not refused: in a
    rolling upgrade a newer agent reports to an older API. The known fields are checked."""

    ignore_unknown = True


class StrictModelSerializer(_Strict, serializers.ModelSerializer):
    """A ModelSerializer that refuses unknown fields instead of silently ignoring them.

    A nested serializer declared for a JSON column is stored as plain JSON: DRF's
    nested-write guard is for related objects, not for a column's shape.
    """

    def _json_values(self, validated_data):
        nested = [
            name
            for name, field in self.fields.items()
            if isinstance(field, serializers.BaseSerializer) and not field.read_only and name in validated_data
        ]
        return {name: _plain(validated_data.pop(name)) for name in nested}

    @transaction.atomic
    def create(self, validated_data):
        values = self._json_values(validated_data)
        if not values:
            return super().create(validated_data)
        model = self.Meta.model
        many = {f.name for f in model._meta.many_to_many}
        related = {name: validated_data.pop(name) for name in list(validated_data) if name in many}
        instance = model._default_manager.create(**validated_data, **values)
        for name, value in related.items():
            getattr(instance, name).set(value)
        return instance

    def update(self, instance, validated_data):
        for name, value in self._json_values(validated_data).items():
            setattr(instance, name, value)
        return super().update(instance, validated_data)

    def merged(self, attrs, *fields):
        """The values ``fields`` will have once saved: ``attrs`` over the stored row (an
        update) or over the model's defaults (a create). Cross-field checks use these."""
        if self.instance is None:
            current = {f: self.Meta.model._meta.get_field(f).get_default() for f in fields}
        else:
            current = {f: getattr(self.instance, f) for f in fields}
        return {**current, **{f: attrs[f] for f in fields if f in attrs}}

    def unique_error(self, model, field, message, **lookup):
        """Raise a field error when another row already has ``lookup``."""
        others = model.objects.filter(**lookup)
        if self.instance is not None:
            others = others.exclude(pk=self.instance.pk)
        if others.exists():
            raise serializers.ValidationError({field: [message]})


def _plain(value):
    """OrderedDicts and ReturnLists as plain JSON values."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def _is_integer(value):
    return (isinstance(value, int) and not isinstance(value, bool)) or (isinstance(value, float) and value.is_integer())


def _is_number(value):
    return isinstance(value, int | float) and not isinstance(value, bool)


# (field class, whether a value has the JSON type it takes, the field's own message for one that has not)
_JSON_TYPES = [
    (serializers.BooleanField, lambda v: isinstance(v, bool), "invalid"),
    (serializers.IntegerField, _is_integer, "invalid"),
    (serializers.FloatField, _is_number, "invalid"),
    (serializers.CharField, lambda v: isinstance(v, str), "invalid"),
    (serializers.PrimaryKeyRelatedField, _is_integer, "incorrect_type"),
]


def type_error(field, value):
    """The field's messages when ``value`` has the wrong JSON type for it, else None.

    Nested serializers check their own fields; null is left to the field's allow_null."""
    if value is None or field.read_only or isinstance(field, serializers.BaseSerializer):
        return None
    if isinstance(field, serializers.ListField | serializers.ManyRelatedField):
        child = field.child_relation if isinstance(field, serializers.ManyRelatedField) else field.child
        if not isinstance(value, list) or child is None:
            return None  # DRF's own "Expected a list" covers the rest
        items = {str(i): error for i, item in enumerate(value) if (error := type_error(child, item))}
        return items or None
    if isinstance(field, serializers.ChoiceField):
        kinds = {type(choice) for choice in field.choices}
        matches = _is_integer(value) if kinds == {int} else isinstance(value, str) if kinds == {str} else True
        return None if matches else [field.error_messages["invalid_choice"].format(input=value)]
    for kind, matches, message in _JSON_TYPES:
        if isinstance(field, kind) and not matches(value):
            return [field.error_messages[message].format(data_type=type(value).__name__)]
    return None
