"""Serializer bases shared by every app."""

from rest_framework import serializers


class StrictModelSerializer(serializers.ModelSerializer):
    """A ModelSerializer that refuses unknown fields instead of silently ignoring them."""

    def to_internal_value(self, data):
        if isinstance(data, dict):
            unknown = sorted(set(data) - set(self.fields))
            if unknown:
                raise serializers.ValidationError({name: ["Unknown field."] for name in unknown})
        return super().to_internal_value(data)

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
