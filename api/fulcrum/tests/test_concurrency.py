"""Optimistic concurrency: every edited object has a version; a writer that sends the version
it read (If-Match or the body) gets 409 and changes nothing when someone changed it since."""

import threading

from django.contrib.auth import get_user_model
from django.db import OperationalError, connection, transaction
from rest_framework.test import APITestCase, APITransactionTestCase

from cluster.models import HaGroup, HaGroupNode, IpvsSync, Node
from fulcrum.errors import exception_handler
from services.models import Member, Pool


class ConcurrencyTest(APITestCase):
    def setUp(self):
        self.client.force_authenticate(get_user_model().objects.create_superuser("ops", password="x" * 12))
        self.pool = Pool.objects.create(name="web")
        self.url = f"/api/v1/pools/{self.pool.pk}/"

    def test_the_version_read_guards_the_write(self):
        read = self.client.get(self.url)
        self.assertEqual((read.data["version"], read["ETag"]), (1, '"1"'))
        first = self.client.patch(self.url, {"algorithm": "least-connections"}, format="json", HTTP_IF_MATCH='"1"')
        self.assertEqual(first.status_code, 200, first.data)
        self.assertEqual((first.data["version"], first["ETag"]), (2, '"2"'))
        # A second writer who also read version 1 is refused, and nothing changes.
        late = self.client.patch(self.url, {"algorithm": "source-hash"}, format="json", HTTP_IF_MATCH='"1"')
        self.assertEqual(late.status_code, 409, late.data)
        self.assertEqual(late.data["version"], 2)
        self.assertIn("someone else", late.data["detail"])
        self.pool.refresh_from_db()
        self.assertEqual((self.pool.algorithm, self.pool.version), ("least-connections", 2))
        # The same through the body, as the console sends it.
        body = self.client.patch(self.url, {"algorithm": "source-hash", "version": 1}, format="json")
        self.assertEqual(body.status_code, 409)
        body = self.client.patch(self.url, {"algorithm": "source-hash", "version": 2}, format="json")
        self.assertEqual((body.status_code, body.data["version"], body.data["algorithm"]), (200, 3, "source-hash"))
        # Without a version the write goes through (last write wins) and still counts.
        self.assertEqual(self.client.patch(self.url, {"name": "www"}, format="json").data["version"], 4)

    def test_a_stale_delete_is_refused(self):
        self.client.patch(self.url, {"name": "www"}, format="json")
        self.assertEqual(self.client.delete(self.url, HTTP_IF_MATCH='"1"').status_code, 409)
        self.assertTrue(Pool.objects.filter(pk=self.pool.pk).exists())
        self.assertEqual(self.client.delete(self.url, HTTP_IF_MATCH='W/"2"').status_code, 204)
        self.assertFalse(Pool.objects.filter(pk=self.pool.pk).exists())

    def test_a_stale_delete_is_refused_where_the_view_deletes_its_own_way(self):
        from services.models import Rule, VirtualService

        service = VirtualService.objects.create(name="www", vip="10.0.0.9", port=80, default_pool=self.pool)
        rule = Rule.objects.create(
            virtual_service=service,
            name="r",
            position=1,
            action="use_pool",
            pool=self.pool,
            conditions=[{"kind": "path_prefix", "values": ["/a"]}],
        )
        self.client.patch(f"/api/v1/rules/{rule.pk}/", {"name": "r2"}, format="json")
        self.assertEqual(self.client.delete(f"/api/v1/rules/{rule.pk}/", HTTP_IF_MATCH='"1"').status_code, 409)
        self.assertTrue(Rule.objects.filter(pk=rule.pk).exists())
        self.assertEqual(self.client.delete(f"/api/v1/rules/{rule.pk}/", HTTP_IF_MATCH='"2"').status_code, 204)

    def test_a_bad_if_match_is_refused(self):
        for bad in ("abc", '"*"', ""):
            response = self.client.patch(self.url, {"name": "x"}, format="json", HTTP_IF_MATCH=bad)
            self.assertEqual(response.status_code, 400, bad)
            self.assertIn("If-Match", response.data)
        self.pool.refresh_from_db()
        self.assertEqual((self.pool.name, self.pool.version), ("web", 1))

    def test_runtime_changes_count_as_changes(self):
        member = Member.objects.create(pool=self.pool, name="s1", address="10.0.2.1", port=80)
        Node.objects.create(name="lb1", token_hash="x" * 64)
        self.assertEqual(self.client.post("/api/v1/revisions/", {}, format="json").status_code, 201)
        response = self.client.post(f"/api/v1/members/{member.pk}/runtime/", {"state": "drain"}, format="json")
        self.assertEqual(response.status_code, 200, response.data)
        self.assertEqual(response.data["member"]["version"], 2)

    def test_singletons_and_ha_groups(self):
        self.assertEqual(self.client.patch("/api/v1/ipvs-sync/", {"ttl": 2}, format="json").data["version"], 2)
        stale = self.client.patch("/api/v1/ipvs-sync/", {"ttl": 3, "version": 1}, format="json")
        self.assertEqual(stale.status_code, 409)
        self.assertEqual(IpvsSync.load().ttl, 2)
        node = Node.objects.create(name="lb1", token_hash="y" * 64)
        group = HaGroup.objects.create(name="front", vrid=51, vips=["10.0.0.10"])
        HaGroupNode.objects.create(group=group, node=node, priority=100)
        url = f"/api/v1/ha-groups/{group.pk}/"
        # "vrrp_version" is the protocol; "version" is the object's.
        response = self.client.patch(url, {"vrrp_version": 2, "version": 1}, format="json")
        self.assertEqual((response.status_code, response.data["vrrp_version"], response.data["version"]), (200, 2, 2))


class UniqueRaceTest(APITransactionTestCase):
    """Two writers create the same name at once: the serializer's uniqueness check passes for
    both (neither sees the other's uncommitted row), PostgreSQL refuses the second insert, and
    its writer gets the check's 400 on the field, not a server error."""

    def test_the_writer_that_loses_the_race_gets_a_400_on_the_field(self):
        self.client.force_authenticate(get_user_model().objects.create_superuser("ops", password="x" * 12))
        inserted, release = threading.Event(), threading.Event()

        def first_writer():
            try:
                with transaction.atomic():
                    Pool.objects.create(name="race")
                    inserted.set()
                    release.wait(10)  # committed once the second writer is blocked on the row
            finally:
                connection.close()

        writer = threading.Thread(target=first_writer)
        writer.start()
        self.assertTrue(inserted.wait(10))
        threading.Timer(1.0, release.set).start()
        answer = self.client.post("/api/v1/pools/", {"name": "race", "algorithm": "round-robin"}, format="json")
        writer.join(10)
        self.assertEqual(answer.status_code, 400, answer.data)
        self.assertIn("Another object has this name already (race)", answer.data["name"][0])
        self.assertEqual(Pool.objects.filter(name="race").count(), 1)


class CollisionTest(APITransactionTestCase):
    """A write that collided with another (a real serialization failure from PostgreSQL, as a
    node's standby publish meets its agent's report when the retries run out) answers 503
    with Retry-After, not 500."""

    def test_a_serialization_failure_answers_503_with_retry_after(self):
        pool = Pool.objects.create(name="shared")
        snapshot_taken, changed = threading.Event(), threading.Event()
        failure = []

        def loser():
            try:
                with transaction.atomic():
                    connection.cursor().execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
                    Pool.objects.get(pk=pool.pk)  # the snapshot
                    snapshot_taken.set()
                    changed.wait(10)
                    Pool.objects.filter(pk=pool.pk).update(name="mine")
            except OperationalError as err:
                failure.append(err)
            finally:
                connection.close()

        thread = threading.Thread(target=loser)
        thread.start()
        self.assertTrue(snapshot_taken.wait(10))
        Pool.objects.filter(pk=pool.pk).update(name="theirs")  # committed meanwhile
        changed.set()
        thread.join(10)
        (error,) = failure
        self.assertEqual(error.__cause__.sqlstate, "40001")
        answer = exception_handler(error, {})
        self.assertEqual((answer.status_code, answer["Retry-After"]), (503, "1"))
        self.assertIn("Try again", answer.data["detail"])
