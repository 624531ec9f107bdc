"""POST /api/v1/rules/bulk/ and bulk-delete/: many rules of one service in one transaction,
checked as single rules are; one bad row refuses the batch, names its row, and stores nothing."""

from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APITestCase

from accounts.models import AuditEntry
from accounts.tests.people import person
from services.models import Pool, Rule, VirtualService

BULK = "/api/v1/rules/bulk/"
DELETE = "/api/v1/rules/bulk-delete/"
FIRST = {
    "position": 0,
    "action": "deny",
    "conditions": [{"kind": "path_prefix", "values": ["/x"], "name": "", "negate": False}],
}


def row(name, path, pool=None, **fields):
    data = {"name": name, "conditions": [{"kind": "path_prefix", "values": [path]}], **fields}
    if pool is not None:
        data.update(action="use_pool", pool=pool)
    else:
        data.setdefault("action", "deny")
    return data


class BulkRulesTest(APITestCase):
    def setUp(self):
        self.client.force_authenticate(person("bulk", "admin"))
        self.web = Pool.objects.create(name="web")
        self.api = Pool.objects.create(name="api")
        self.tcp = Pool.objects.create(name="raw")
        self.service = VirtualService.objects.create(name="site", vip="10.0.0.1", port=80, default_pool=self.web)
        VirtualService.objects.create(name="db", vip="10.0.0.2", port=5432, protocol="tcp", default_pool=self.tcp)
        Rule.objects.create(virtual_service=self.service, position=0, name="first", action="deny",
                            conditions=[{"kind": "path_prefix", "values": ["/x"], "name": "", "negate": False}])  # fmt: skip

    def post(self, body, url=BULK):
        return self.client.post(url, body, format="json")

    def rules(self):
        return list(
            Rule.objects.filter(virtual_service=self.service).order_by("position").values_list("name", "position")
        )

    def test_append_thousands_in_order(self):
        rows = [row(f"r{i}", f"/p{i}/", pool=self.api.pk) for i in range(2000)]
        answer = self.post({"virtual_service": self.service.pk, "rules": rows})
        self.assertEqual(answer.status_code, 200, answer.data)
        self.assertEqual(answer.data, {"virtual_service": self.service.pk, "rules": 2001, "created": 2000,
                                       "updated": 0, "deleted": 0})  # fmt: skip
        self.assertEqual(self.rules()[:3], [("first", 0), ("r0", 1), ("r1", 2)])
        self.assertEqual(self.rules()[-1], ("r1999", 2000))
        stored = Rule.objects.get(virtual_service=self.service, name="r7")
        self.assertEqual((stored.pool, stored.conditions[0]["values"]), (self.api, ["/p7/"]))
        entry = AuditEntry.objects.get(action="rule-bulk")
        self.assertEqual((entry.object_name, entry.changes["created"]), ("site", 2000))

    def test_replace_keeps_same_named_rules_reorders_and_drops_the_rest(self):
        self.post({"virtual_service": self.service.pk, "rules": [row("a", "/a"), row("b", "/b")]})
        kept = Rule.objects.get(name="a").pk
        answer = self.post({"virtual_service": self.service.pk, "mode": "replace",
                            "rules": [row("c", "/c"), row("a", "/a2", pool=self.api.pk)]})  # fmt: skip
        self.assertEqual(answer.status_code, 200, answer.data)
        self.assertEqual((answer.data["created"], answer.data["updated"], answer.data["deleted"]), (1, 1, 2))
        self.assertEqual(self.rules(), [("c", 0), ("a", 1)])
        a = Rule.objects.get(name="a")
        self.assertEqual((a.pk, a.pool, a.conditions[0]["values"], a.version), (kept, self.api, ["/a2"], 2))

    def test_one_bad_row_refuses_the_batch_and_names_the_row(self):
        rows = [row(f"r{i}", f"/p{i}/") for i in range(50)]
        cases = [
            (17, {"conditions": [{"kind": "path_regex", "values": ["(open"]}]}, "conditions"),  # the compiler
            (23, {"name": "bad name"}, "name"),  # the field
            (31, {"name": "r3"}, "name"),  # twice in the batch
            (5, {"name": "first"}, "name"),  # already the service's
            (40, {"pool": 999999, "action": "use_pool"}, "pool"),
            (44, {"action": "use_pool", "pool": None}, "pool"),  # the compiler: use_pool needs a pool
            (12, {"position": 3}, "position"),  # not a row's field
        ]
        for index, change, field in cases:
            with self.subTest(index=index, field=field):
                bad = [dict(r) for r in rows]
                bad[index].update(change)
                answer = self.post({"virtual_service": self.service.pk, "rules": bad})
                self.assertEqual(answer.status_code, 400, answer.data)
                self.assertEqual(list(answer.data["rules"]), [str(index)], answer.data)
                self.assertIn(field, answer.data["rules"][str(index)], answer.data)
                self.assertEqual(self.rules(), [("first", 0)])

    def test_a_batch_that_breaks_another_object_is_refused(self):
        answer = self.post({"virtual_service": self.service.pk, "rules": [row("to-db", "/db", pool=self.tcp.pk)]})
        self.assertEqual(answer.status_code, 400, answer.data)
        self.assertIn("used by both http and tcp virtual services", str(answer.data))
        self.assertEqual(self.rules(), [("first", 0)])

    def test_delete_many_by_name_keeps_the_order_of_the_rest(self):
        self.post({"virtual_service": self.service.pk, "rules": [row(f"r{i}", f"/{i}") for i in range(6)]})
        answer = self.post(
            {"virtual_service": self.service.pk, "names": ["r1", "first", "r4"]}, "/api/v1/rules/bulk-delete/"
        )
        self.assertEqual(answer.status_code, 200, answer.data)
        self.assertEqual((answer.data["deleted"], answer.data["rules"]), (3, 4))
        self.assertEqual(self.rules(), [("r0", 0), ("r2", 1), ("r3", 2), ("r5", 3)])
        missing = self.post({"virtual_service": self.service.pk, "names": ["r0", "nope"]}, "/api/v1/rules/bulk-delete/")
        self.assertEqual(missing.status_code, 400, missing.data)
        self.assertIn("nope", str(missing.data["names"]))
        self.assertEqual(len(self.rules()), 4)

    def test_deleting_many_costs_the_same_queries_as_deleting_a_few(self):
        """Each deleted rule is named in the audit after its service: not one query per rule."""

        def queries(n, url, body):
            self.post({"virtual_service": self.service.pk, "rules": [row(f"n{n}-{i}", f"/{n}/{i}") for i in range(n)]})
            with CaptureQueriesContext(connection) as captured:
                answer = self.post({"virtual_service": self.service.pk, **body(n)}, url)
            self.assertEqual(answer.status_code, 200, answer.data)
            self.assertEqual(answer.data["deleted"], n + (url == BULK))  # a replace drops "first" too
            entry = AuditEntry.objects.filter(action__startswith="rule-bulk").latest("pk")
            self.assertEqual((entry.object_name, entry.status_code), ("site", 200))
            Rule.objects.filter(virtual_service=self.service).exclude(name="first").delete()
            Rule.objects.get_or_create(virtual_service=self.service, name="first", defaults=FIRST)
            return len(captured)

        # The deletes themselves go 100 rows a statement (Django's batches): 300 rules, 2 more.
        replace = {"mode": "replace", "rules": [row("only", "/only")]}
        self.assertLessEqual(queries(300, BULK, lambda n: replace), queries(5, BULK, lambda n: replace) + 3)
        by_name = lambda n: {"names": [f"n{n}-{i}" for i in range(n)]}  # noqa: E731
        self.assertLessEqual(queries(300, DELETE, by_name), queries(5, DELETE, by_name) + 3)

    def test_a_viewer_may_not(self):
        self.client.force_authenticate(person("look", "viewer"))
        answer = self.post({"virtual_service": self.service.pk, "rules": [row("a", "/a")]})
        self.assertEqual(answer.status_code, 403)
        self.assertEqual(self.rules(), [("first", 0)])
