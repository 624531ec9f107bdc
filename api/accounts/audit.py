"""The audit log: who changed what, when, from where, and how it went.

``AuditMiddleware`` writes one ``AuditEntry`` after every unsafe request under ``/api/v1/``
made by a person (node agents are not people and are not recorded). While the request
runs, model signals collect each saved or deleted row's values into a context variable, so
the entry carries a field diff (``{field: [old, new]}``; a create lists the new values, a
delete the old) and the request body, secrets removed. Queryset ``.update()`` and
``bulk_create()`` bypass signals: for such writes (and failed ones, which change nothing)
the body tells what was asked. Views that record
their own event (sign-in, sign-out, password change) call ``record_event``, and so may
code that changes things outside a request (automatic rollbacks).

Secrets never reach the log: a field whose name says password, passphrase, private key,
secret or token shows only ``"(changed)"`` in a diff and ``"(secret)"`` in created or
deleted values and request bodies.
"""

import hashlib
import json
import logging
from contextvars import ContextVar
from dataclasses import dataclass, field

from django.core.exceptions import RequestDataTooBig
from django.core.serializers.json import DjangoJSONEncoder
from django.db import transaction
from django.db.models.signals import m2m_changed, post_delete, post_save, pre_save
from django.http.request import RawPostDataException

from accounts.network import client_address
from fulcrum.parsers import strict_json

logger = logging.getLogger(__name__)

SECRET_WORDS = ("password", "passphrase", "private_key", "secret", "token", "join_code")
CHANGED, SECRET = "(changed)", "(secret)"
# Models whose rows are bookkeeping, not operator intent (or far too large to copy).
NOT_AUDITED = {
    "accounts.auditentry",
    "sessions.session",
    "contenttypes.contenttype",
    "auth.permission",
    "revisions.noderevision",
    "cluster.haevent",
}
NOT_AUDITED_FIELDS = {"version"}
# Derived copies that other endpoints show (a revision's frozen snapshot: see its diff).
NOT_AUDITED_MODEL_FIELDS = {"revisions.revision": {"snapshot"}}
LARGE_VALUE = 2000  # characters of JSON above which a value is shown by size and digest
LARGE_BODY = 65536
# Action words that read better than the view's for some objects.
ACTION_NAMES = {("revision", "create"): "apply", ("api-token", "delete"): "revoke"}
VIEW_ACTIONS = {
    "create": "create",
    "update": "update",
    "partial_update": "update",
    "destroy": "delete",
    "post": "create",
    "put": "update",
    "patch": "update",
    "delete": "delete",
}
UNSAFE_METHODS = {"POST", "PUT", "PATCH", "DELETE"}

_changes = ContextVar("audit_changes", default=None)


def is_secret(name):
    name = name.lower()
    return any(word in name for word in SECRET_WORDS)


def object_type(model):
    """``virtual-service``, ``ha-group``, ``api-token``: the name of a model (or of an object's) as the API says it."""
    return str(model._meta.verbose_name).lower().replace(" ", "-")


def redact(value):
    """A request body (or JSON column) with every secret-named value replaced by
    ``"(secret)"``, and NUL characters, which PostgreSQL's JSON cannot hold, by U+FFFD."""
    if isinstance(value, dict):
        return {
            _text(k): (SECRET if is_secret(str(k)) and v not in ("", None) else redact(v)) for k, v in value.items()
        }
    if isinstance(value, list):
        return [redact(v) for v in value]
    return _text(value)


def _text(value):
    return value.replace("\x00", "\ufffd") if isinstance(value, str) else value


def _storable(value):
    """``value`` with NUL characters replaced, keys and all."""
    if isinstance(value, dict):
        return {_text(k): _storable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_storable(v) for v in value]
    return _text(value)


# -- collecting model changes ---------------------------------------------------------------


@dataclass
class _Change:
    """One row's values before and after the request (None: did not exist)."""

    model: type
    pk: object
    name: str = ""
    before: dict | None = None
    after: dict | None = None
    seen: bool = field(default=False)  # saved or deleted, not only read


def _audited(model):
    return model._meta.label_lower not in NOT_AUDITED and not model._meta.auto_created


def _fields(model):
    skipped = NOT_AUDITED_FIELDS | NOT_AUDITED_MODEL_FIELDS.get(model._meta.label_lower, set())
    return [
        f
        for f in model._meta.concrete_fields
        if not f.primary_key
        and f.name not in skipped
        and not getattr(f, "auto_now", False)
        and not getattr(f, "auto_now_add", False)
    ]


def _plain(value):
    text = json.dumps(value, cls=DjangoJSONEncoder)
    if len(text) > LARGE_VALUE:
        return f"({len(text)} characters, sha256 {hashlib.sha256(text.encode()).hexdigest()[:12]})"
    return json.loads(text)


def _values(instance):
    """The row's audited values; secrets as a digest only; deferred fields left out."""
    deferred = instance.get_deferred_fields()
    values = {}
    for f in _fields(type(instance)):
        if f.attname in deferred:
            continue
        value = getattr(instance, f.attname)
        if is_secret(f.name):
            value = hashlib.sha256(str(value).encode()).hexdigest() if value not in ("", None) else ""
        values[f.name] = _plain(redact(value))  # JSON columns may hold secrets too
    return values


def _key(instance):
    return (instance._meta.label_lower, str(instance.pk))


def _change_for(instance, load_before):
    changes = _changes.get()
    key = _key(instance)
    if key not in changes:
        before = None
        if load_before:  # the audited fields the instance has (a revision's snapshot is neither)
            deferred = instance.get_deferred_fields()
            audited = [f.name for f in _fields(type(instance)) if f.attname not in deferred]
            stored = type(instance)._base_manager.filter(pk=instance.pk).only(*audited).first()
            before = _values(stored) if stored is not None else None
        changes[key] = _Change(type(instance), instance.pk, before=before)
    return changes[key]


def _pre_save(sender, instance, raw=False, **kwargs):
    if _changes.get() is None or raw or not _audited(sender):
        return
    if not instance._state.adding and instance.pk is not None:
        _change_for(instance, load_before=True)


def _post_save(sender, instance, created=False, raw=False, **kwargs):
    if _changes.get() is None or raw or not _audited(sender):
        return
    change = _change_for(instance, load_before=False)
    change.after = {**(change.after or {}), **_values(instance)}
    change.name, change.seen = str(instance)[:200], True


def _post_delete(sender, instance, **kwargs):
    if _changes.get() is None or not _audited(sender):
        return
    change = _change_for(instance, load_before=False)
    if change.before is None and change.after is None:
        change.before = _values(instance)
    change.after, change.name, change.seen = None, str(instance)[:200], True


def _m2m_changed(sender, instance, action, reverse, **kwargs):
    if _changes.get() is None or reverse or not _audited(type(instance)):
        return
    names = [f.name for f in type(instance)._meta.many_to_many if f.remote_field.through is sender]
    if not names or action not in ("pre_add", "pre_remove", "pre_clear", "post_add", "post_remove", "post_clear"):
        return
    current = sorted(getattr(instance, names[0]).values_list("pk", flat=True))
    change = _change_for(instance, load_before=not instance._state.adding)
    if action.startswith("pre_"):
        if change.before is not None:
            change.before.setdefault(names[0], current)
    else:
        change.after = {**(change.after or _values(instance)), names[0]: current}
        change.name, change.seen = str(instance)[:200], True


def connect_signals():
    """Called once by the app config."""
    pre_save.connect(_pre_save, dispatch_uid="audit_pre_save")
    post_save.connect(_post_save, dispatch_uid="audit_post_save")
    post_delete.connect(_post_delete, dispatch_uid="audit_post_delete")
    m2m_changed.connect(_m2m_changed, dispatch_uid="audit_m2m_changed")


class collecting:
    """Collect model changes made inside the block; ``.changes`` lists them afterwards
    (already merged into parents, e.g. a profile's role into its user)."""

    def __enter__(self):
        self._token = _changes.set({})
        self.changes = []
        return self

    def __exit__(self, *exc_info):
        collected = _changes.get()
        _changes.reset(self._token)
        seen = [c for c in collected.values() if c.seen and (c.before is not None or c.after is not None)]
        self.changes = _merge_into_parents(seen)


def _merge_into_parents(changes):
    by_key = {(c.model._meta.label_lower, str(c.pk)): c for c in changes}
    for change in [c for c in changes if getattr(c.model, "audit_parent", None)]:
        link = change.model._meta.get_field(change.model.audit_parent)
        parent_pk = (change.after or change.before or {}).get(link.name)
        if parent_pk is None:
            continue
        parent_model = link.related_model
        key = (parent_model._meta.label_lower, str(parent_pk))
        if key not in by_key:
            parent = parent_model._base_manager.filter(pk=parent_pk).first()
            by_key[key] = _Change(parent_model, parent_pk, str(parent or ""), {}, {}, True)
        target, own = by_key[key], {f.name for f in _fields(change.model)} - {link.name}
        if target.before is not None:
            target.before.update({k: v for k, v in (change.before or {}).items() if k in own})
        if target.after is not None:
            target.after.update({k: v for k, v in (change.after or {}).items() if k in own})
        del by_key[(change.model._meta.label_lower, str(change.pk))]
    return list(by_key.values())


def describe(change):
    """``(action, changes)`` of one collected change, secrets hidden."""
    if change.before is None:
        return "create", {k: (SECRET if v else "") if is_secret(k) else v for k, v in change.after.items()}
    if change.after is None:
        return "delete", {k: (SECRET if v else "") if is_secret(k) else v for k, v in change.before.items()}
    diff = {}
    for name, new in change.after.items():
        old = change.before.get(name)
        if old != new:
            diff[name] = CHANGED if is_secret(name) else [old, new]
    return "update", diff


# -- writing entries ------------------------------------------------------------------------


def _people(request):
    """``(user, token)`` the request was made with; user None for anonymous."""
    from accounts.models import ApiToken

    user = getattr(request, "user", None)
    user = user if user is not None and user.is_authenticated else None
    auth = getattr(request, "auth", None)
    return user, auth if isinstance(auth, ApiToken) else None


def record_event(action, *, request=None, actor=None, actor_name=None, token=None, obj=None, **fields):
    """Write one audit entry now and return it.

    ``request`` fills address, method, path, the actor and the API token (and keeps the
    middleware from writing a second entry for it); ``obj`` fills the object's type, id
    and name. Other keyword arguments are ``AuditEntry`` fields (``status_code``,
    ``changes``, ``detail``...). Outside a request, give ``actor`` or ``actor_name``
    (e.g. "system").
    """
    from accounts.models import AuditEntry

    if request is not None:
        django_request = getattr(request, "_request", request)
        django_request.audit_recorded = True
        user, used_token = _people(django_request)
        actor = actor if actor is not None else user
        token = token if token is not None else used_token
        fields.setdefault("address", client_address(django_request))
        fields.setdefault("method", django_request.method)
        fields.setdefault("path", django_request.path[:500])
    if obj is not None:
        fields.setdefault("object_type", object_type(obj))
        fields.setdefault("object_id", str(obj.pk))
        fields.setdefault("object_name", str(obj)[:200])
    name = actor_name if actor_name is not None else (actor.get_username() if actor is not None else "")
    fields = {k: _storable(v) for k, v in fields.items()}
    with transaction.atomic():  # a savepoint: a failed write must not break the caller's transaction
        return AuditEntry.objects.create(
            action=action,
            actor=actor,
            actor_name=_text(name)[:150],
            token=token,
            token_name=token.name if token is not None else "",
            **fields,
        )


def _body(request):
    """The request body as JSON with secrets removed, or a note of its size."""
    raw = getattr(request, "_audit_body", None)
    if not raw:
        return None
    if len(raw) > LARGE_BODY:
        return {"(body)": f"{len(raw)} bytes"}
    try:
        return redact(strict_json(raw.decode()))
    except (ValueError, RecursionError):  # what the parser refuses is only measured
        return {"(body)": f"{len(raw)} bytes, not JSON"}


class AuditMiddleware:
    """One audit entry per unsafe ``/api/v1/`` request from a person, written after the answer."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if not self._wanted(request):
            return self.get_response(request)
        try:
            request._audit_body = request.body  # read now: DRF consumes the stream later
        except (RawPostDataException, RequestDataTooBig):
            request._audit_body = None
        with collecting() as collected:
            response = self.get_response(request)
        try:
            self._record(request, response, collected.changes)
        except Exception:  # the log must never turn a done change into an error
            logger.exception("could not write the audit entry for %s %s", request.method, request.path)
        return response

    def process_view(self, request, view_func, view_args, view_kwargs):
        request._audit_view = (view_func, view_kwargs)

    @staticmethod
    def _wanted(request):
        return (
            request.method in UNSAFE_METHODS
            and request.path.startswith("/api/v1/")
            and not request.headers.get("Authorization", "").startswith("Node ")
        )

    def _record(self, request, response, changes):
        from cluster.models import Node

        if getattr(request, "audit_recorded", False) or isinstance(getattr(request, "auth", None), Node):
            return
        view_func, kwargs = getattr(request, "_audit_view", (None, {}))
        view_action, model = _view_action(view_func, request.method)
        ok = response.status_code < 400
        primary, related = _primary(changes if ok else [], model, kwargs.get("pk"))
        fields = {"status_code": response.status_code, "changes": {}}
        if primary is not None:
            fields["changes"] = describe(primary)[1]
            model = primary.model
            fields.update(object_id=str(primary.pk), object_name=primary.name)
        elif model is not None and kwargs.get("pk") is not None:
            fields.update(object_id=str(kwargs["pk"])[:64], object_name=_name_of(model, kwargs["pk"]))
        fields["object_type"] = object_type(model) if model is not None else ""
        fields["related"] = [_related(c) for c in related]
        fields["body"] = _body(request)
        if not fields.get("object_name") and isinstance(fields.get("body"), dict):
            asked = fields["body"].get("name")  # e.g. a refused create: the name it asked for
            fields["object_name"] = asked[:200] if isinstance(asked, str) else ""
        action = ACTION_NAMES.get((fields["object_type"], view_action), view_action)
        record_event(action, request=request, **fields)


def _view_action(view_func, method):
    """The DRF action (create, update, delete, runtime...) and the view's model, if any."""
    cls = getattr(view_func, "cls", None)
    actions = getattr(view_func, "actions", None) or {}
    name = actions.get(method.lower(), method.lower())
    name = getattr(cls, "audit_actions", {}).get(name) or VIEW_ACTIONS.get(name) or name.replace("_", "-")
    queryset = getattr(cls, "queryset", None)
    return name, queryset.model if queryset is not None else None


def _primary(changes, model, pk):
    """The change the request was about (the view's own object), and the others."""
    for change in changes:
        if model is not None and change.model is model and (pk is None or str(change.pk) == str(pk)):
            return change, [c for c in changes if c is not change]
    if model is None and changes:
        return changes[0], changes[1:]
    return None, changes


def _related(change):
    action, values = describe(change)
    return {
        "object_type": object_type(change.model),
        "object_id": str(change.pk),
        "object_name": change.name,
        "action": action,
        "changes": values,
    }


def _name_of(model, pk):
    try:
        return str(model._base_manager.filter(pk=pk).first() or "")[:200]
    except (ValueError, TypeError):
        return ""
