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

    def unique_error(self, model, field, message, **lookup):
        """Raise a field error when another row already has ``lookup``."""
        others = model.objects.filter(**lookup)
        if self.instance is not None:
            others = others.exclude(pk=self.instance.pk)
        if others.exists():
            raise serializers.ValidationError({field: [message]})
