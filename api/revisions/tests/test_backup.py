"""Backup and restore: a versioned document with every object and secret, the same bytes
after export -> restore -> export, a dry run that changes nothing, and a bad document
refused whole with the path of each problem."""

import copy
import json
import re

from rest_framework.test import APITestCase

from certificates.models import Certificate
from cluster.models import HaGroup, IpvsSync, Node
from revisions.models import Revision
from revisions.tests.configuration import admin_client, agent_client, build, wipe
from services.models import Member, Pool, Rule, VirtualService

MODELS = (Certificate, Pool, Member, Rule, VirtualService, HaGroup, IpvsSync, Node)


def rows():
    """Every stored object, to show that a refused restore changed nothing."""
    return {model.__name__: list(model.objects.order_by("pk").values()) for model in MODELS}


class BackupTest(APITestCase):
    def setUp(self):
        self.admin = admin_client()
        self.tokens = build(self.admin)

    def export(self):
        response = self.admin.get("/api/v1/backup/")
        self.assertEqual(response.status_code, 200)
        return response

    def restore(self, document, dry_run=False, expected=200):
        body = {"document": document, "dry_run": dry_run}
        response = self.admin.post("/api/v1/backup/restore/", body, format="json")
        self.assertEqual(response.status_code, expected, response.data)
        return response.data

    def test_export_holds_every_object_and_secret_and_no_time(self):
        response = self.export()
        self.assertRegex(response["Content-Disposition"], r'^attachment; filename="fulcrum-backup-\d{8}T\d{6}Z\.json"$')
        document = json.loads(response.content)
        self.assertEqual((document["format"], document["format_version"]), ("fulcrum-backup", 1))
        objects = document["objects"]
        site = next(c for c in objects["certificates"] if c["name"] == "site")
        self.assertIn("PRIVATE KEY", site["private_key"])
        self.assertEqual(site["description"], "the public site")
        self.assertEqual([p["name"] for p in objects["pools"]], ["api", "web"])
        self.assertEqual(objects["ha_groups"][0]["auth_password"], "s3cret")
        self.assertEqual(
            objects["nodes"], [{"name": "lb1", "address": "10.0.1.3"}, {"name": "lb2", "address": "10.0.1.4"}]
        )
        self.assertEqual(objects["ipvs_sync"]["ha_group"], "front")
        www = next(s for s in objects["virtual_services"] if s["name"] == "www")
        self.assertEqual([r["name"] for r in www["rules"]], ["to-api", "seen"])
        self.assertEqual(www["certificates"], ["site", "other"])
        text = response.content.decode()
        self.assertIsNone(re.search(r"\d{4}-\d\d-\d\dT\d\d:\d\d", text), "a timestamp in the backup")
        self.assertEqual(self.export().content, response.content)  # deterministic

    def test_export_restore_into_an_empty_appliance_export_is_identical(self):
        before = self.export().content
        wipe()
        self.assertFalse(Pool.objects.exists() or Node.objects.exists() or Certificate.objects.exists())
        answer = self.restore(json.loads(before))
        self.assertTrue(answer["applied"])
        self.assertEqual(sorted(answer["node_tokens"]), ["lb1", "lb2"])
        self.assertEqual(self.export().content, before)
        # The re-created nodes' agents use the tokens shown once; nothing is published yet.
        self.assertFalse(Revision.objects.exists())
        self.assertTrue(self.admin.get("/api/v1/revisions/pending/").data["pending"])
        self.assertEqual(self.admin.post("/api/v1/revisions/", {}, format="json").status_code, 201)
        poll = agent_client(answer["node_tokens"]["lb1"]).get("/api/v1/agent/desired/?known=0")
        self.assertEqual(poll.status_code, 200)
        self.assertIn("s3cret", poll.data["files"]["keepalived.conf"])
        self.assertTrue(any(name.endswith(".pem") for name in poll.data["files"]))

    def test_dry_run_shows_the_changes_and_changes_nothing(self):
        document = json.loads(self.export().content)
        Member.objects.filter(name="s1").update(weight=7)
        VirtualService.objects.get(name="plain").delete()
        stored = rows()
        answer = self.restore(document, dry_run=True)
        self.assertFalse(answer["applied"])
        self.assertEqual(answer["node_tokens"], {})
        changes = {c["path"]: c for c in answer["changes"]}
        self.assertEqual(set(changes), {"pools/web", "virtual-services/plain"})
        self.assertEqual(changes["virtual-services/plain"]["change"], "added")
        self.assertEqual(
            [(f["field"], f["old"], f["new"]) for f in changes["pools/web"]["fields"]], [("members/s1/weight", 7, 1)]
        )
        self.assertNotIn("PRIVATE KEY", json.dumps(answer))
        self.assertEqual(rows(), stored)

    def test_restore_into_a_running_appliance_keeps_ids_and_raises_versions_of_what_changed(self):
        document = json.loads(self.export().content)
        web, api = Pool.objects.get(name="web"), Pool.objects.get(name="api")
        s1, s2 = Member.objects.get(name="s1"), Member.objects.get(name="s2")
        www = VirtualService.objects.get(name="www")
        site = Certificate.objects.get(name="site")
        # Changed, removed and added since the backup; the certificate renamed.
        self.admin.patch(f"/api/v1/members/{s1.pk}/", {"weight": 9}, format="json")
        Member.objects.filter(name="s3").delete()
        VirtualService.objects.filter(name="plain").delete()
        Pool.objects.create(name="extra")
        Certificate.objects.filter(pk=site.pk).update(name="renamed")
        Rule.objects.filter(name="to-api").update(position=5)
        Rule.objects.filter(name="seen").update(position=0)
        versions = {m.name: m.version for m in Member.objects.all()}
        answer = self.restore(document)
        paths = {(c["path"], c["change"]) for c in answer["changes"]}
        self.assertEqual(
            paths,
            {
                ("pools/web", "changed"),
                ("pools/extra", "removed"),
                ("virtual-services/plain", "added"),
                ("virtual-services/www", "changed"),
                ("certificates/renamed", "removed"),
                ("certificates/site", "added"),
            },
        )
        self.assertEqual(self.export().content, self.render(document))
        # Objects that stay keep their ids; a version rises only where something changed.
        self.assertEqual(Pool.objects.get(name="web").pk, web.pk)
        self.assertEqual(Pool.objects.get(name="api").pk, api.pk)
        self.assertEqual(VirtualService.objects.get(name="www").pk, www.pk)
        self.assertEqual(Certificate.objects.get(name="site").pk, site.pk)
        self.assertEqual(Member.objects.get(name="s1").pk, s1.pk)
        self.assertEqual(Member.objects.get(name="s1").version, versions["s1"] + 1)
        self.assertEqual(Member.objects.get(name="s2").version, s2.version)
        self.assertEqual(Pool.objects.get(name="api").version, api.version)
        self.assertFalse(Pool.objects.filter(name="extra").exists())
        self.assertEqual(
            list(Rule.objects.filter(virtual_service=www).values_list("name", "position")), [("to-api", 0), ("seen", 1)]
        )
        # A restore is not published: it is pending until applied.
        self.assertFalse(Revision.objects.exists())

    def test_swapped_endpoints_listeners_and_vrids_restore(self):
        document = json.loads(self.export().content)
        Member.objects.filter(name="s1").update(address="10.0.2.99")
        Member.objects.filter(name="s2").update(address="10.0.2.11")  # s1's old address
        Member.objects.filter(name="s1").update(address="10.0.2.12")  # s2's old address
        VirtualService.objects.filter(name="plain").update(port=8080)
        VirtualService.objects.filter(name="www").update(port=80)
        VirtualService.objects.filter(name="plain").update(port=443, protocol="https")
        HaGroup.objects.filter(name="front").update(vrid=60)
        HaGroup.objects.create(name="second", vrid=51, vips=["10.0.0.99"])  # takes front's old VRID
        self.restore(document)
        self.assertEqual(self.export().content, self.render(document))

    def test_bad_objects_are_refused_with_their_path_and_change_nothing(self):
        document = json.loads(self.export().content)
        stored = rows()
        cases = [
            (("pools", "web", lambda p: p["members"][0].update(port=70000)), "pools/web/members/s1/port"),
            (("pools", "web", lambda p: p.update(name="we\nb")), "pools/we\nb/name"),
            (("pools", "web", lambda p: p["members"][0].update(colour="red")), "pools/web/members/s1"),
            (
                ("virtual_services", "www", lambda s: s.update(default_pool="nowhere")),
                "virtual-services/www/default_pool",
            ),
            (("certificates", "site", lambda c: c.update(private_key="not a key")), "certificates/site/private_key"),
            (("pools", "web", lambda p: p.update(description=5)), "pools/web/description"),
            (("ha_groups", "front", lambda g: g.update(vrid=0)), "ha-groups/front/vrid"),
        ]
        for (section, name, spoil), path in cases:
            bad = copy.deepcopy(document)
            spoil(next(e for e in bad["objects"][section] if e["name"] == name))
            answer = self.restore(bad, expected=400)
            self.assertEqual(answer["detail"], "Not restored.")
            self.assertIn(path, [p["path"] for p in answer["problems"]], answer)
            self.assertEqual(rows(), stored, path)

    def test_unknown_format_or_version_is_refused(self):
        document = json.loads(self.export().content)
        for change, field in (
            ({"format": "ucs"}, "format"),
            ({"format_version": 2}, "format_version"),
            ({"extra": 1}, "extra"),
        ):
            answer = self.restore({**document, **change}, expected=400)
            self.assertEqual(answer["problems"][0]["path"], field)
        answer = self.restore({**document, "objects": {**document["objects"], "widgets": []}}, expected=400)
        self.assertEqual(answer["problems"][0]["path"], "widgets")
        response = self.admin.post("/api/v1/backup/restore/", {"document": document}, format="json")
        self.assertEqual(response.status_code, 400)
        self.assertIn("dry_run", response.data)

    @staticmethod
    def render(document):
        return (json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode()

    def test_an_empty_document_empties_the_appliance_but_keeps_the_nodes(self):
        empty = {"format": "fulcrum-backup", "format_version": 1, "objects": {}}
        answer = self.restore(empty)
        removed = {c["path"] for c in answer["changes"] if c["change"] == "removed"}
        self.assertIn("ha-groups/front", removed)
        self.assertIn("certificates/site", removed)
        self.assertFalse(Pool.objects.exists() or VirtualService.objects.exists() or HaGroup.objects.exists())
        self.assertFalse(Certificate.objects.exists())
        self.assertEqual(list(Node.objects.values_list("name", flat=True)), ["lb1", "lb2"])
        sync = IpvsSync.objects.get()
        self.assertEqual((sync.enabled, sync.ha_group, sync.interface), (False, None, "eth0"))

    def test_a_certificate_with_a_bad_name_is_refused(self):
        document = json.loads(self.export().content)
        document["objects"]["certificates"][0]["name"] = "~bad"
        answer = self.restore(document, expected=400)
        self.assertIn("certificates/~bad/name", [p["path"] for p in answer["problems"]], answer)

    def test_certificate_content_gets_the_uploads_own_checks(self):
        stored = rows()
        document = json.loads(self.export().content)
        certs = {c["name"]: c for c in document["objects"]["certificates"]}
        cases = [
            ({"private_key": certs["other"]["private_key"]}, "certificates/site/private_key", "Does not match"),
            ({"certificate": 5}, "certificates/site/certificate", "expected PEM text"),
            ({"chain": "-----BEGIN CERTIFICATE-----\nnope\n"}, "certificates/site/chain", ""),
            ({"fingerprint": "00" * 32}, "certificates/site/fingerprint", "is not the certificate's"),
            ({"chain": "x" * 70_000}, "certificates/site/chain", "Too large"),
        ]
        for change, path, says in cases:
            broken = json.loads(json.dumps(document))
            next(c for c in broken["objects"]["certificates"] if c["name"] == "site").update(change)
            answer = self.restore(broken, expected=400)
            messages = [p["message"] for p in answer["problems"] if p["path"] == path]
            self.assertTrue(messages and says in messages[0], (change, answer))
        self.assertEqual(rows(), stored)

    def test_malformed_sections_are_refused_not_taken_as_empty(self):
        stored = rows()
        base = {"format": "fulcrum-backup", "format_version": 1}
        cases = [
            ({"pools": {}}, "pools"),
            ({"pools": [{"name": "a"}, {"name": "a"}]}, "pools/a"),
            ({"ipvs_sync": {"enabled": "yes"}}, "ipvs-sync/enabled"),
            ({"ipvs_sync": {"enabled": False, "interface": 5}}, "ipvs-sync/interface"),
            ({"nodes": [{"name": "lb1", "colour": "red"}]}, "nodes/lb1/colour"),
        ]
        for objects, path in cases:
            answer = self.restore({**base, "objects": objects}, expected=400)
            self.assertIn(path, [p["path"] for p in answer["problems"]], answer)
        self.assertEqual(rows(), stored)
