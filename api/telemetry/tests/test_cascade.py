"""Telemetry rows go with what they describe in the database too (migration 0002): a sample,
a health row or event that a report committed after Django collected a member's rows for a
delete does not make that delete fail at its commit."""

from django.db import connection, transaction
from django.test import TransactionTestCase

from cluster.models import Node
from services.models import Member, Pool, VirtualService
from telemetry.models import HealthEvent, MemberHealth, TrafficSample
from telemetry.tests.helpers import T0, service_with_pool


class CascadeTest(TransactionTestCase):
    def test_rows_a_report_added_behind_a_delete_go_with_the_member(self):
        service_with_pool("web")
        node = Node.objects.create(name="lb1")
        member = Member.objects.get(name="s1")
        figures = {"connections": 1, "requests": 2, "errors": 0, "bytes_in": 3, "bytes_out": 4}
        health = {"status": "up", "checked_at": T0, "since": T0}
        TrafficSample.objects.create(node=node, at=T0, interval_s=10, member=member, **figures)
        MemberHealth.objects.create(member=member, node=node, **health)
        HealthEvent.objects.create(member=member, node=node, at=T0, status="up")
        # What Django's delete does once it has collected (and deleted) the rows it knew of,
        # when a report committed rows of the member in between: the member's own DELETE.
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute("DELETE FROM services_member WHERE id = %s", [member.pk])
        self.assertFalse(TrafficSample.objects.filter(member_id=member.pk).exists())
        self.assertFalse(MemberHealth.objects.filter(member_id=member.pk).exists())
        self.assertFalse(HealthEvent.objects.filter(member_id=member.pk).exists())
        # And through the API's own path: the pool, its members and their telemetry.
        TrafficSample.objects.create(node=node, at=T0, interval_s=10, member=Member.objects.get(name="s2"), **figures)
        VirtualService.objects.all().delete()
        Pool.objects.get(name="web-pool").delete()
        self.assertEqual(TrafficSample.objects.filter(member__isnull=False).count(), 0)

    def test_every_telemetry_foreign_key_cascades_in_the_database(self):
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT conrelid::regclass::text, confdeltype FROM pg_constraint WHERE contype = 'f' "
                "AND conrelid::regclass::text LIKE 'telemetry_%%'"
            )
            kinds = cursor.fetchall()
        self.assertGreaterEqual(len(kinds), 6, kinds)  # samples: node, service, member; health and events: 2 each
        self.assertEqual({kind for _, kind in kinds}, {"c"}, kinds)
