"""Model fields shared by the apps."""

import functools
import json

from django.db import models
from psycopg.types.json import Json


class DocumentField(models.JSONField):
    """A JSON document kept as PostgreSQL's ``json`` (its text, checked) instead of ``jsonb``:
    for a document written and read whole and never searched inside, where building jsonb is
    most of the cost. A revision's snapshot at 10,000 services is tens of megabytes of JSON:
    about 1.5 s to insert as jsonb, 0.4 s as json, and a third of the time to read back.

    The document is an object or a list (a string would be read as JSON text again). psycopg
    sends it as json and parses json it reads; jsonb it leaves as text for Django to parse (a
    column not yet migrated: new code on a standby during a rolling upgrade), so text read is
    parsed here. Keys keep the order they were written in."""

    def db_type(self, connection):
        return "json"

    def get_db_prep_value(self, value, connection, prepared=False):
        if not prepared:
            value = self.get_prep_value(value)
        return Json(value, dumps=functools.partial(json.dumps, cls=self.encoder) if self.encoder else json.dumps)

    def from_db_value(self, value, expression, connection):
        return json.loads(value, cls=self.decoder) if isinstance(value, str) else value
