"""POST /api/v1/members/bulk/ and bulk-delete/: many members of one pool in one transaction,
checked as single members are; one bad row refuses the batch, names its row, and stores nothing."""

from rest_framework.test import APITestCase

from accounts.models import AuditEntry
from accounts.tests.people import person
from services.models import Member, Pool, VirtualService

BULK = "/api/v1/members/bulk/"


def row(name, address, port=80, **fields):
    return {"name": name, "address": address, "port": port, **fields}


class BulkMembersTest(APITestCase):
    def setUp(self):
        self.client.force_authenticate(person("bulk", "admin"))
        self.web = Pool.objects.create(name="web")
        self.fast = Pool.objects.create(name="fast")
        VirtualService.objects.create(name="site", vip="10.0.0.1", port=80, default_pool=self.web)
        VirtualService.objects.create(
            name="l4", vip="10.0.0.2", port=80, protocol="tcp", forwarding="nat", default_pool=self.fast
        )
        Member.objects.create(pool=self.web, name="old", address="10.1.0.1", port=80)

    def post(self, body, url=BULK):
        return self.client.post(url, body, format="json")

    def members(self, pool=None):
        return sorted(Member.objects.filter(pool=pool or self.web).values_list("name", "address", "port", "weight"))

    def test_append_thousands(self):
        rows = [row(f"m{i}", f"10.2.{i // 250}.{i % 250 + 1}", weight=1 + i % 7) for i in range(2000)]
        answer = self.post({"pool": self.web.pk, "members": rows})
        self.assertEqual(answer.status_code, 200, answer.data)
        self.assertEqual(
            answer.data, {"pool": self.web.pk, "members": 2001, "created": 2000, "updated": 0, "deleted": 0}
        )
        self.assertEqual(Member.objects.get(pool=self.web, name="m8").weight, 2)
        entry = AuditEntry.objects.get(action="member-bulk")
        self.assertEqual((entry.object_name, entry.changes["created"]), ("web", 2000))

    def test_replace_keeps_same_named_members_and_drops_the_rest(self):
        self.post({"pool": self.web.pk, "members": [row("a", "10.1.0.2"), row("b", "10.1.0.3")]})
        kept = Member.objects.get(name="a").pk
        answer = self.post(
            {"pool": self.web.pk, "mode": "replace", "members": [row("c", "10.1.0.4"), row("a", "10.1.0.2", 8080)]}
        )
        self.assertEqual(answer.status_code, 200, answer.data)
        self.assertEqual((answer.data["created"], answer.data["updated"], answer.data["deleted"]), (1, 1, 2))
        self.assertEqual(self.members(), [("a", "10.1.0.2", 8080, 1), ("c", "10.1.0.4", 80, 1)])
        a = Member.objects.get(name="a")
        self.assertEqual((a.pk, a.version), (kept, 2))
        # The same endpoint under a new name, in place of the old member: no clash with what goes.
        swap = self.post({"pool": self.web.pk, "mode": "replace", "members": [row("d", "10.1.0.2", 8080)]})
        self.assertEqual(swap.status_code, 200, swap.data)
        self.assertEqual(self.members(), [("d", "10.1.0.2", 8080, 1)])

    def test_one_bad_row_refuses_the_batch_and_names_the_row(self):
        rows = [row(f"m{i}", f"10.2.0.{i + 1}") for i in range(50)]
        cases = [
            (17, {"address": "10.2.0.999"}, "address"),  # the field
            (23, {"name": "bad name"}, "name"),
            (31, {"name": "m3"}, "name"),  # twice in the batch
            (33, {"address": "10.2.0.4"}, "address"),  # the same endpoint as row 3
            (5, {"name": "old"}, "name"),  # already the pool's
            (6, {"address": "10.1.0.1"}, "address"),  # already the pool's endpoint
            (40, {"weight": 999}, "weight"),
            (44, {"forwarding": "tunnel"}, "forwarding"),  # the compiler: an IPVS setting on a layer-7 pool
            (12, {"pool": self.fast.pk}, "pool"),  # not a row's field
        ]
        for index, change, field in cases:
            with self.subTest(index=index, field=field):
                bad = [dict(r) for r in rows]
                bad[index].update(change)
                answer = self.post({"pool": self.web.pk, "members": bad})
                self.assertEqual(answer.status_code, 400, answer.data)
                self.assertEqual(list(answer.data["members"]), [str(index)], answer.data)
                self.assertIn(field, answer.data["members"][str(index)], answer.data)
                self.assertEqual(self.members(), [("old", "10.1.0.1", 80, 1)])

    def test_the_layer_4_pool_takes_its_settings_and_refuses_layer_7_ones(self):
        good = self.post({"pool": self.fast.pk, "members": [row("r1", "10.3.0.1", forwarding="tunnel", weight=0)]})
        self.assertEqual(good.status_code, 200, good.data)
        bad = self.post({"pool": self.fast.pk, "members": [row("r2", "10.3.0.2", slowstart_ms=1000)]})
        self.assertEqual(bad.status_code, 400, bad.data)
        self.assertIn("IPVS has no queue or slow start", str(bad.data["members"]["0"]))
        self.assertEqual([m[0] for m in self.members(self.fast)], ["r1"])

    def test_delete_many_by_name(self):
        self.post({"pool": self.web.pk, "members": [row(f"m{i}", f"10.2.0.{i + 1}") for i in range(6)]})
        answer = self.post({"pool": self.web.pk, "names": ["m1", "old", "m4"]}, "/api/v1/members/bulk-delete/")
        self.assertEqual(answer.status_code, 200, answer.data)
        self.assertEqual((answer.data["deleted"], answer.data["members"]), (3, 4))
        self.assertEqual([m[0] for m in self.members()], ["m0", "m2", "m3", "m5"])
        missing = self.post({"pool": self.web.pk, "names": ["m0", "nope"]}, "/api/v1/members/bulk-delete/")
        self.assertEqual(missing.status_code, 400, missing.data)
        self.assertIn("web has no member named nope", str(missing.data["names"]))
        self.assertEqual(len(self.members()), 4)

    def test_a_viewer_may_not(self):
        self.client.force_authenticate(person("look", "viewer"))
        self.assertEqual(self.post({"pool": self.web.pk, "members": [row("a", "10.1.0.9")]}).status_code, 403)
        self.assertEqual(
            self.post({"pool": self.web.pk, "names": ["old"]}, "/api/v1/members/bulk-delete/").status_code, 403
        )
        self.assertEqual(self.members(), [("old", "10.1.0.1", 80, 1)])
