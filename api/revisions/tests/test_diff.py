"""The difference between two revisions: objects by name, each node's rendered files, and
never a private key."""

import json

from django.contrib.auth import get_user_model
from rest_framework.test import APITestCase

from cluster.models import Node
from revisions.diff import file_changes, fingerprint, object_changes, with_fields
from revisions.models import NodeRevision, Revision
from revisions.tests.test_publish import make_service
from services.models import Member, Pool, Rule, VirtualService

POOL = {
    "name": "web",
    "algorithm": "round-robin",
    "members": [{"name": "s1", "weight": 1}, {"name": "s2", "weight": 1}],
}


def test_objects_are_compared_by_name_not_position():
    other = {"name": "api", "algorithm": "round-robin", "members": []}
    old = {"pools": [POOL, other]}
    new = {"pools": [other, {**POOL, "members": [{"name": "s2", "weight": 1}, {"name": "s1", "weight": 3}]}]}
    changes = object_changes(old, new)
    assert [c["path"] for c in changes] == ["pools/web"]
    assert {f["field"]: (f["old"], f["new"]) for f in changes[0]["fields"]} == {
        "members/s1/weight": (1, 3),
        "members/order": (["s1", "s2"], ["s2", "s1"]),  # the members' order is shown, not hidden
    }


def test_added_removed_and_singletons():
    old = {"pools": [POOL], "virtual_services": [{"name": "www", "port": 80}]}
    new = {"pools": [], "virtual_services": [{"name": "www", "port": 80}], "ipvs_sync": {"interface": "eth1"}}
    changes = {c["path"]: c for c in object_changes(old, new)}
    assert set(changes) == {"pools/web", "ipvs-sync"}
    assert changes["pools/web"]["change"] == "removed"
    assert changes["ipvs-sync"] == {
        "path": "ipvs-sync",
        "change": "added",
        "fields": [{"field": "interface", "old": None, "new": "eth1", "default": False}],
    }


def test_without_fields_the_same_objects_change_the_same_way():
    """What publish (nothing to apply?), the banner's count and the dashboard ask for."""
    api = {"name": "api", "algorithm": "round-robin", "members": []}
    old = {"pools": [POOL, api], "virtual_services": [{"name": "www", "port": 80}]}
    new = {"pools": [{**POOL, "algorithm": "source-hash"}], "virtual_services": [{"name": "w2", "port": 81}]}
    for before, after in ((old, new), (new, old), ({}, new), (old, old), ({**old, "ipvs_sync": {}}, old)):
        listed = object_changes(before, after)
        assert object_changes(before, after, fields=False) == [{k: c[k] for k in ("path", "change")} for c in listed]
    assert object_changes(old, old, fields=False) == []


def test_the_fingerprint_moves_exactly_when_an_object_changes():
    """A revision's fingerprint decides "nothing to apply" without reading its snapshot back."""
    api = {"name": "api", "algorithm": "round-robin", "members": []}
    base = {"revision": 3, "pools": [POOL, api], "virtual_services": [{"name": "www", "port": 80}]}
    same = [
        {**base, "revision": 4},  # the number is not an object
        {**base, "pools": [api, POOL]},  # nor the order of a section
        {**base, "pools": [{"members": [], "algorithm": "round-robin", "name": "api"}, POOL]},  # nor of a dict
        {**base, "certificates": []},  # an empty section is an absent one
    ]
    other = [
        {**base, "pools": [{**POOL, "members": POOL["members"][::-1]}, api]},  # a list's order in an object is
        {**base, "pools": [{**POOL, "algorithm": "source-hash"}, api]},
        {**base, "pools": [POOL]},
        {**base, "ipvs_sync": {}},  # a singleton, even empty
        {**base, "virtual_services": [{"name": "www", "port": "80"}]},
    ]
    for snapshot in same:
        assert object_changes(base, snapshot, fields=False) == [], snapshot
        assert fingerprint(snapshot) == fingerprint(base), snapshot
    for snapshot in other:
        assert object_changes(base, snapshot, fields=False) != [], snapshot
        assert fingerprint(snapshot) != fingerprint(base), snapshot
    assert fingerprint({}) == fingerprint(None) == fingerprint({"revision": 1, "pools": []})


def test_a_page_of_changes_gets_the_fields_of_its_objects_only():
    """The pending view and a revision's diff page the objects first, then list fields."""
    api = {"name": "api", "algorithm": "round-robin", "members": []}
    old = {"pools": [POOL, api], "virtual_services": [{"name": "www", "port": 80}]}
    new = {"pools": [{**POOL, "algorithm": "source-hash"}], "virtual_services": [{"name": "www", "port": 8080}]}
    new["ipvs_sync"] = {"interface": "eth1"}
    objects = object_changes(old, new, fields=False)
    assert [c["path"] for c in objects] == ["virtual-services/www", "pools/api", "pools/web", "ipvs-sync"]
    assert with_fields(old, new, objects[2:4]) == [
        {"path": "pools/web", "change": "changed", "fields": [
            {"field": "algorithm", "old": "round-robin", "new": "source-hash", "default": False}]},
        {"path": "ipvs-sync", "change": "added", "fields": [
            {"field": "interface", "old": None, "new": "eth1", "default": False}]},
    ]  # fmt: skip
    removed = with_fields(old, new, objects[1:2])[0]["fields"]
    assert {f["field"]: (f["old"], f["new"]) for f in removed} == {
        "algorithm": ("round-robin", None), "members": ([], None), "name": ("api", None)}  # fmt: skip
    assert with_fields(old, new, objects[:1])[0]["fields"] == [
        {"field": "port", "old": 80, "new": 8080, "default": False}
    ]


def test_fields_of_an_object_added_or_removed_say_when_they_are_at_their_default():
    """A new service listed every field (92 rows, issue 20): the console folds the defaults."""
    pool = {**POOL, "members": [{"name": "s1", "weight": 1, "backup": False, "max_queue": 9}], "http_reuse": "always"}
    for old, new in (({}, {"pools": [pool]}), ({"pools": [pool]}, {})):
        (change,) = object_changes(old, new)
        defaults = {f["field"]: f["default"] for f in change["fields"]}
        assert defaults == {
            "name": False,  # no default: the operator's choice
            "algorithm": False,
            "http_reuse": True,
            "members/order": False,
            "members/s1/name": False,
            "members/s1/weight": False,
            "members/s1/backup": True,
            "members/s1/max_queue": False,  # 0 by default
        }, change["change"]
    changed = object_changes({"pools": [pool]}, {"pools": [{**pool, "http_reuse": "never"}]})
    assert changed[0]["fields"] == [{"field": "http_reuse", "old": "always", "new": "never", "default": False}]


def test_secret_fields_show_only_that_they_changed():
    group = {"name": "front", "vrid": 51, "auth_password": "hunter22"}
    changed = object_changes({"ha_groups": [group]}, {"ha_groups": [{**group, "auth_password": "tiger99"}]})
    assert changed[0]["fields"] == [
        {"field": "auth_password", "old": "(changed)", "new": "(changed)", "default": False}
    ]
    added = object_changes({}, {"ha_groups": [group]})
    assert {"field": "auth_password", "old": None, "new": "(secret)", "default": False} in added[0]["fields"]
    removed = object_changes({"ha_groups": [group]}, {"ha_groups": [{**group, "auth_password": ""}]})
    assert removed[0]["fields"] == [{"field": "auth_password", "old": "(secret)", "new": "", "default": False}]
    assert "hunter22" not in json.dumps([changed, added, removed])


def test_file_diffs_are_unified_and_hide_keys():
    old = {"haproxy.cfg": "a\nweight 1\n", "haproxy.d/cert-x.pem": "-----BEGIN PRIVATE KEY-----\nold\n"}
    new = {"haproxy.cfg": "a\nweight 3\n", "haproxy.d/cert-x.pem": "-----BEGIN PRIVATE KEY-----\nnew\n"}
    changes = {c["file"]: c for c in file_changes(old, new, "r1", "r2")}
    assert changes["haproxy.cfg"]["diff"].splitlines() == [
        "--- r1/haproxy.cfg",
        "+++ r2/haproxy.cfg",
        "@@ -1,2 +1,2 @@",
        " a",
        "-weight 1",
        "+weight 3",
    ]
    assert "PRIVATE" not in changes["haproxy.d/cert-x.pem"]["diff"]
    assert file_changes(old, old, "r1", "r2") == []


class RevisionDiffApiTest(APITestCase):
    def setUp(self):
        self.client.force_authenticate(get_user_model().objects.create_superuser("ops", password="x" * 12))
        make_service()
        Node.objects.create(name="lb1", token_hash="x" * 64)

    def _apply(self):
        response = self.client.post("/api/v1/revisions/", {}, format="json")
        self.assertEqual(response.status_code, 201, response.data)
        return Revision.objects.get(number=response.data["number"])

    def _diff(self, revision, query=""):
        return self.client.get(f"/api/v1/revisions/{revision.pk}/diff/{query}")

    def test_a_weight_change_shows_in_the_objects_and_in_haproxy_cfg(self):
        Pool.objects.update(algorithm="weighted-round-robin")
        first = self._apply()
        Member.objects.filter(name="s1").update(weight=3)
        second = self._apply()
        response = self._diff(second)
        self.assertEqual(response.status_code, 200, response.data)
        self.assertEqual((response.data["from_revision"], response.data["to_revision"]), (first.number, second.number))
        self.assertEqual(
            [
                (o["path"], o["change"], [(f["field"], f["old"], f["new"]) for f in o["fields"]])
                for o in response.data["objects"]
            ],
            [("pools/web", "changed", [("members/s1/weight", 1, 3)])],
        )
        cfg = next(f for f in response.data["files"] if f["file"] == "haproxy.cfg")
        self.assertEqual(cfg["node"], "lb1")
        self.assertIn("-    server s1 10.77.2.11:80 weight 1 check", cfg["diff"])
        self.assertIn("+    server s1 10.77.2.11:80 weight 3 check", cfg["diff"])
        # Compared with itself: nothing.
        same = self._diff(second, f"?from={second.number}").data
        self.assertEqual((same["objects"], same["files"]), ([], []))
        # Without the files (no node compiled), and an empty page past the end: still counted.
        bare = self._diff(second, "?files=false&offset=1").data
        self.assertEqual((bare["objects"], bare["files"], bare["count"]), ([], [], 1))
        self.assertEqual(bare["summary"], {"added": 0, "changed": 1, "removed": 0})
        self.assertEqual(self._diff(second, "?files=maybe").status_code, 400)

    def test_a_diff_writes_nothing_for_a_node_that_joined_since(self):
        """A GET never writes: a node added after the revisions gets its files compiled for the
        answer, not stored (storing them raced a node deleted meanwhile into a 500)."""
        Pool.objects.update(algorithm="weighted-round-robin")
        self._apply()
        Member.objects.filter(name="s1").update(weight=3)
        second = self._apply()
        Node.objects.create(name="lb2", token_hash="y" * 64)
        stored = NodeRevision.objects.count()
        response = self._diff(second)
        self.assertEqual(response.status_code, 200, response.data)
        self.assertEqual(NodeRevision.objects.count(), stored)
        diffs = {f["node"]: f["diff"] for f in response.data["files"] if f["file"] == "haproxy.cfg"}
        self.assertEqual(set(diffs), {"lb1", "lb2"})
        self.assertIn("+    server s1 10.77.2.11:80 weight 3 check", diffs["lb2"])

    def test_the_first_revision_is_compared_with_nothing(self):
        first = self._apply()
        data = self._diff(first).data
        self.assertIsNone(data["from_revision"])
        self.assertEqual(
            {(o["path"], o["change"]) for o in data["objects"]},
            {
                ("pools/web", "added"),
                ("virtual-services/web", "added"),
                ("nodes/lb1", "added"),
            },
        )
        self.assertEqual({f["change"] for f in data["files"]}, {"added"})

    def test_rule_order_and_certificate_keys(self):
        self._apply()
        generated = self.client.post(
            "/api/v1/certificates/generate/", {"name": "site", "common_name": "www.example.com"}, format="json"
        )
        self.assertEqual(generated.status_code, 201, generated.data)
        service = VirtualService.objects.get()
        service.protocol, service.port = "https", 443
        service.default_certificate_id = generated.data["id"]
        service.save()
        pool = Pool.objects.get()
        Rule.objects.create(
            virtual_service=service,
            name="one",
            position=1,
            action="use_pool",
            pool=pool,
            conditions=[{"kind": "path_prefix", "values": ["/a"]}],
        )
        Rule.objects.create(
            virtual_service=service,
            name="two",
            position=2,
            action="use_pool",
            pool=pool,
            conditions=[{"kind": "path_prefix", "values": ["/b"]}],
        )
        second = self._apply()
        Rule.objects.filter(name="one").update(position=3)
        third = self._apply()
        body = json.dumps(self._diff(second).data)
        self.assertNotIn("PRIVATE KEY", body)
        self.assertIn("its content is not shown", body)
        fields = {f["field"]: f for o in self._diff(third).data["objects"] for f in o["fields"]}
        self.assertEqual((fields["rules/order"]["old"], fields["rules/order"]["new"]), (["one", "two"], ["two", "one"]))

    def test_bad_from_is_refused(self):
        first = self._apply()
        self.assertEqual(self._diff(first, "?from=x").status_code, 400)
        self.assertEqual(self._diff(first, "?from=99").status_code, 404)
