"""POST /agent/telemetry/: who may send, what is refused, what is stored, kept and pruned."""

from datetime import timedelta

from django.contrib.auth import get_user_model
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient, APITestCase

from accounts.choices import Role
from accounts.tests.people import person, signed_in
from services.models import Member, VirtualService
from telemetry.models import EVENTS_PER_MEMBER, HealthEvent, MemberHealth, TrafficSample
from telemetry.tests.helpers import (
    T0,
    agent,
    at,
    figures,
    member_entry,
    post,
    report,
    service_with_pool,
)

URL = "/api/v1/agent/telemetry/"


class AgentTelemetryTest(APITestCase):
    def setUp(self):
        self.web = service_with_pool("web")
        self.node, self.agent = agent("lb1")
        self.s1 = Member.objects.get(name="s1")

    def stored(self):
        return TrafficSample.objects.count(), MemberHealth.objects.count(), HealthEvent.objects.count()

    # ---- who may send

    def test_only_a_node_token_is_taken(self):
        body = report([{"service": "web", **figures(requests=1)}])
        admin = APIClient()
        admin.force_authenticate(get_user_model().objects.create_superuser("root", password="correct horse battery"))
        person("alice", Role.ADMIN)
        session = signed_in("alice", enforce_csrf_checks=False)
        wrong = APIClient()
        wrong.credentials(HTTP_AUTHORIZATION="Node not-a-token")
        for client in (APIClient(), admin, session, wrong):
            self.assertIn(client.post(URL, body, format="json").status_code, (401, 403))
        self.assertEqual(self.stored(), (0, 0, 0))
        self.assertEqual(post(self.agent, body, T0).status_code, 204)
        self.assertEqual(self.stored(), (1, 0, 0))

    # ---- what is refused

    def test_bad_reports_are_refused_on_the_field_and_store_nothing(self):
        entry = member_entry("web-pool", "s1")
        cases = [
            ({"interval_s": 0}, "interval_s"),
            ({"interval_s": 301}, "interval_s"),
            ({"interval_s": "10"}, "interval_s"),
            ({"services": [{"service": "web", **figures(), "connections": -1}]}, "services"),
            ({"services": [{"service": "web", **figures(), "bytes_out": 2**63}]}, "services"),
            ({"services": [{"service": "web", **figures(), "requests": "many"}]}, "services"),
            ({"services": [{"service": "web"}]}, "services"),
            ({"members": [{**entry, "health": {**entry["health"], "status": "sideways"}}]}, "members"),
            ({"members": [{**entry, "health": {**entry["health"], "check": "x" * 33}}]}, "members"),
            ({"members": [{**entry, "health": {**entry["health"], "detail": "x" * 1001}}]}, "members"),
            ({"members": [{**entry, "health": {**entry["health"], "latency_ms": -1}}]}, "members"),
            ({"members": [{**entry, "health": {**entry["health"], "code": "200"}}]}, "members"),
            ({"members": [{k: v for k, v in entry.items() if k != "health"}]}, "members"),
            ({"services": [{"service": "web", **figures()}] * 10_001}, "services"),
        ]
        for change, field in cases:
            answer = post(self.agent, {**report(members=[entry]), **change}, T0)
            self.assertEqual(answer.status_code, 400, (field, answer.content[:200]))
            self.assertIn(field, answer.json())
        self.assertEqual(self.stored(), (0, 0, 0))

    def test_optional_health_words_may_be_left_out(self):
        body = report(members=[{"pool": "web-pool", "member": "s1", **figures(), "health": {"status": "unchecked"}}])
        self.assertEqual(post(self.agent, body, T0).status_code, 204)
        row = MemberHealth.objects.get()
        self.assertEqual(
            (row.status, row.check_status, row.detail, row.code, row.latency_ms), ("unchecked", "", "", None, None)
        )

    # ---- what is stored

    def test_samples_are_stored_with_the_apis_clock(self):
        body = report(
            [{"service": "web", **figures(3, 120, 1, 1000, 50000)}, {"service": "gone", **figures(requests=9)}],
            [member_entry("web-pool", "s1", connections=1, requests=40), member_entry("nope", "s1")],
        )
        self.assertEqual(post(self.agent, body, at(7)).status_code, 204)
        service = TrafficSample.objects.get(service=self.web)
        self.assertEqual(
            (service.node, service.at, service.interval_s, service.member),
            (self.node, at(7), 10, None),
        )
        self.assertEqual(
            (service.connections, service.requests, service.errors, service.bytes_in, service.bytes_out),
            (3, 120, 1, 1000, 50000),
        )
        member = TrafficSample.objects.get(member=self.s1)
        self.assertEqual((member.connections, member.requests, member.service), (1, 40, None))
        self.assertEqual(TrafficSample.objects.count(), 2)  # "gone" and "nope/s1" skipped
        self.node.refresh_from_db()
        self.assertEqual(self.node.last_seen, at(7))

    def test_samples_are_placed_when_the_agent_read_them_if_the_apis_clock_agrees(self):
        """A report read at 9 s that arrives at 12 s is graphed at 9 s: in its own bucket, not in
        the next one beside the following report. A read_at ahead of the API's clock, or older
        than the interval and a minute, is placed on arrival; health is always the API's time."""
        cases = [
            (at(9), at(12), at(9)),
            (at(12) + timedelta(seconds=5), at(12), at(17)),  # clocks a little apart
            (at(12) + timedelta(seconds=6), at(12), at(12)),  # ahead
            (at(12) - timedelta(seconds=70), at(12), at(-58)),  # the interval and a minute late
            (at(12) - timedelta(seconds=71), at(12), at(12)),  # older
            (None, at(12), at(12)),
        ]
        for read_at, arrival, expected in cases:
            TrafficSample.objects.all().delete()
            body = {**report(members=[member_entry("web-pool", "s1")]), "read_at": read_at}
            self.assertEqual(post(self.agent, body, arrival).status_code, 204)
            self.assertEqual(TrafficSample.objects.get().at, expected, read_at)
            self.assertEqual(MemberHealth.objects.get().checked_at, arrival)
        answer = post(self.agent, {**report(), "read_at": "yesterday"}, T0)
        self.assertEqual((answer.status_code, list(answer.json())), (400, ["read_at"]))

    def test_samples_older_than_65_minutes_are_dropped_on_the_next_report(self):
        body = report([{"service": "web", **figures(requests=1)}])
        post(self.agent, body, T0)
        post(self.agent, body, T0 + timedelta(minutes=64))
        self.assertEqual(TrafficSample.objects.count(), 2)
        post(self.agent, body, T0 + timedelta(minutes=65, seconds=1))
        self.assertEqual(
            sorted(TrafficSample.objects.values_list("at", flat=True)),
            [T0 + timedelta(minutes=64), T0 + timedelta(minutes=65, seconds=1)],
        )

    def test_telemetry_goes_with_its_member_service_and_node(self):
        body = report([{"service": "web", **figures()}], [member_entry("web-pool", "s1")])
        post(self.agent, body, T0)
        self.assertEqual(self.stored(), (2, 1, 1))
        self.s1.delete()
        self.assertEqual(self.stored(), (1, 0, 0))
        VirtualService.objects.all().delete()
        self.assertEqual(self.stored(), (0, 0, 0))
        post(self.agent, report(members=[member_entry("web-pool", "s2")]), T0)
        self.node.delete()
        self.assertEqual(self.stored(), (0, 0, 0))

    # ---- health and its changes

    def health(self):
        return MemberHealth.objects.get(member=self.s1, node=self.node)

    def events(self):
        return list(
            HealthEvent.objects.filter(member=self.s1).order_by("at").values_list("previous", "status", "check_status")
        )

    def test_the_first_report_creates_the_row_and_one_event(self):
        entry = member_entry("web-pool", "s1", "up", check="L7OK", detail="HTTP status check returned code <200>")
        post(self.agent, report(members=[entry]), at(0))
        row = self.health()
        self.assertEqual(
            (row.status, row.check_status, row.detail, row.code, row.latency_ms),
            ("up", "L7OK", "HTTP status check returned code <200>", 200, 2),
        )
        self.assertEqual((row.checked_at, row.since, row.last_failure, row.last_failure_at), (at(0), at(0), "", None))
        self.assertEqual(self.events(), [("", "up", "L7OK")])

    def test_transitions_make_events_and_record_the_last_failure(self):
        up = member_entry("web-pool", "s1", "up", check="L7OK", detail="ok", latency_ms=3)
        down = member_entry(
            "web-pool", "s1", "down", check="L4TOUT", detail="Layer4 timeout", code=None, latency_ms=1001
        )
        refused = member_entry("web-pool", "s1", "down", check="L4CON", detail="Connection refused", code=None)
        drain = member_entry("web-pool", "s1", "drain", check="L7OK", detail="ok")
        for seconds, entry in [(0, up), (10, up), (20, down), (30, down), (40, refused), (50, up), (60, drain)]:
            self.assertEqual(post(self.agent, report(members=[entry]), at(seconds)).status_code, 204)
            row = self.health()
            if seconds == 10:
                self.assertEqual((row.since, row.checked_at, row.last_failure), (at(0), at(10), ""))
            if seconds == 30:  # still down: since stays, the failure is seen again
                self.assertEqual(
                    (row.since, row.last_failure, row.last_failure_at), (at(20), "L4TOUT Layer4 timeout", at(30))
                )
                self.assertEqual((row.code, row.latency_ms), (None, 1001))
            if seconds == 40:  # a down report with other words replaces them
                self.assertEqual(
                    (row.since, row.last_failure, row.last_failure_at), (at(20), "L4CON Connection refused", at(40))
                )
            if seconds == 50:  # back up: the last failure is kept
                self.assertEqual((row.status, row.since, row.last_failure), ("up", at(50), "L4CON Connection refused"))
        row = self.health()
        self.assertEqual(
            (row.status, row.since, row.last_failure, row.last_failure_at), ("drain", at(60), "L7OK ok", at(60))
        )
        self.assertEqual(
            self.events(),
            [("", "up", "L7OK"), ("up", "down", "L4TOUT"), ("down", "up", "L7OK"), ("up", "drain", "L7OK")],
        )
        event = HealthEvent.objects.get(status="down")
        self.assertEqual(
            (event.at, event.detail, event.code, event.latency_ms, event.node),
            (at(20), "Layer4 timeout", None, 1001, self.node),
        )

    def test_each_node_has_its_own_row_and_events(self):
        other, other_agent = agent("lb2")
        post(self.agent, report(members=[member_entry("web-pool", "s1", "up")]), at(0))
        post(other_agent, report(members=[member_entry("web-pool", "s1", "down", check="L4CON")]), at(1))
        rows = dict(MemberHealth.objects.filter(member=self.s1).values_list("node__name", "status"))
        self.assertEqual(rows, {"lb1": "up", "lb2": "down"})
        self.assertEqual(HealthEvent.objects.filter(member=self.s1).count(), 2)
        self.assertEqual(MemberHealth.objects.get(node=other).last_failure, "L4CON")

    def test_events_are_kept_a_week_and_200_per_member(self):
        s2 = Member.objects.get(name="s2")
        old = [HealthEvent(member=self.s1, node=self.node, at=at(-8 * 86400 + i), status="up") for i in range(3)]
        many = [
            HealthEvent(member=self.s1, node=self.node, at=at(-3600 + i), status="up" if i % 2 else "down")
            for i in range(EVENTS_PER_MEMBER + 5)
        ]
        other = [
            HealthEvent(member=s2, node=self.node, at=at(-3600 + i), status="up") for i in range(EVENTS_PER_MEMBER + 5)
        ]
        HealthEvent.objects.bulk_create(old + many + other)
        post(self.agent, report(members=[member_entry("web-pool", "s1", "up")]), at(0))
        kept = HealthEvent.objects.filter(member=self.s1)
        self.assertEqual(kept.count(), EVENTS_PER_MEMBER)
        self.assertEqual(kept.order_by("-at").first().at, at(0))  # the newest kept, the oldest dropped
        self.assertEqual(kept.order_by("at").first().at, at(-3600 + 6))
        # Only members that had a change are trimmed; the week applies to all.
        self.assertEqual(HealthEvent.objects.filter(member=s2).count(), EVENTS_PER_MEMBER + 5)

    def test_a_report_costs_the_same_queries_for_1_item_as_for_40(self):
        for i in range(2, 21):
            service_with_pool(f"svc{i}", members=("a", "b"), subnet=i)

        def cost(seconds, services, members, status):
            body = report(
                [{"service": name, **figures(requests=1)} for name in services],
                [member_entry(pool, name, status) for pool, name in members],
            )
            with CaptureQueriesContext(connection) as captured:
                self.assertEqual(post(self.agent, body, at(seconds)).status_code, 204)
            return len(captured)

        few_members = [("web-pool", "s1")]
        many_members = [(f"svc{i}-pool", m) for i in range(2, 21) for m in ("a", "b")] + [("web-pool", "s1")]
        many_services = ["web"] + [f"svc{i}" for i in range(2, 21)]
        first = cost(0, ["web"], few_members, "up")  # a new row and an event
        first_many = cost(10, many_services, many_members, "up")  # 38 new rows and events
        self.assertEqual(first, first_many)
        same = cost(20, ["web"], few_members, "up")  # no change
        same_many = cost(30, many_services, many_members, "up")
        self.assertEqual(same, same_many)
        flips = cost(40, ["web"], few_members, "down")
        flips_many = cost(50, many_services, many_members, "down")
        self.assertEqual(flips, flips_many)
        self.assertEqual(HealthEvent.objects.count(), 39 * 2)
