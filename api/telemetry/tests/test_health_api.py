"""GET /health/ and /health-events/: rows per member and node, filters, staleness, paging."""

from rest_framework.test import APIClient, APITestCase

from accounts.choices import Role
from accounts.tests.people import person
from services.models import Member, Pool, Rule
from telemetry.tests.helpers import agent, at, clock, member_entry, post, report, service_with_pool


class HealthApiTest(APITestCase):
    def setUp(self):
        self.web = service_with_pool("web")
        self.api = service_with_pool("api", members=("a1",), subnet=2)
        self.spare = Pool.objects.create(name="spare")
        Member.objects.create(pool=self.spare, name="x1", address="10.3.0.1", port=80)
        self.viewer = APIClient()
        self.viewer.force_authenticate(person("vera", Role.VIEWER))
        self.lb1, lb1 = agent("lb1")
        self.lb2, lb2 = agent("lb2")
        down = {"check": "L7STS", "detail": "HTTP status check returned code <503>", "code": 503}
        post(lb1, report(members=[member_entry("web-pool", "s1"), member_entry("web-pool", "s2")]), at(0))
        post(lb1, report(members=[member_entry("web-pool", "s2", "down", **down)]), at(10))
        post(lb1, report(members=[member_entry("api-pool", "a1"), member_entry("spare", "x1")]), at(20))
        post(lb2, report(members=[member_entry("web-pool", "s1")]), at(-120))  # lb2 went quiet since

    def get(self, url, now=None):
        with clock(now or at(30)):
            answer = self.viewer.get(url)
        self.assertEqual(answer.status_code, 200, answer.content)
        return answer.json()

    def rows(self, query=""):
        return [
            (r["pool_name"], r["member_name"], r["node_name"], r["status"])
            for r in self.get(f"/api/v1/health/{query}")["results"]
        ]

    def test_one_row_per_member_and_node(self):
        body = self.get("/api/v1/health/")
        self.assertEqual(body["count"], 5)
        s2 = next(r for r in body["results"] if r["member_name"] == "s2")
        member = Member.objects.get(name="s2")
        self.assertEqual(
            s2,
            {
                "member": member.pk,
                "member_name": "s2",
                "pool": member.pool_id,
                "pool_name": "web-pool",
                "node": self.lb1.pk,
                "node_name": "lb1",
                "status": "down",
                "check": "L7STS",
                "detail": "HTTP status check returned code <503>",
                "code": 503,
                "latency_ms": 2,
                "checked_at": "2026-03-01T12:00:10Z",
                "since": "2026-03-01T12:00:10Z",
                "last_failure": "L7STS HTTP status check returned code <503>",
                "last_failure_at": "2026-03-01T12:00:10Z",
                "stale": False,
            },
        )

    def test_a_row_not_reported_for_a_minute_is_stale(self):
        stale = {(r["member_name"], r["node_name"]): r["stale"] for r in self.get("/api/v1/health/")["results"]}
        self.assertEqual(stale[("s1", "lb2")], True)
        self.assertEqual(stale[("s1", "lb1")], False)
        later = {
            r["member_name"]: r["stale"]
            for r in self.get("/api/v1/health/?pool=" + str(self.api.default_pool_id), now=at(81))["results"]
        }
        self.assertEqual(later, {"a1": True})  # reported at 12:00:20, read at 12:01:21

    def test_filters(self):
        web_pool = self.web.default_pool
        self.assertEqual(
            self.rows(f"?pool={web_pool.pk}"),
            [("web-pool", "s1", "lb1", "up"), ("web-pool", "s1", "lb2", "up"), ("web-pool", "s2", "lb1", "down")],
        )
        s2 = Member.objects.get(name="s2")
        self.assertEqual(self.rows(f"?member={s2.pk}"), [("web-pool", "s2", "lb1", "down")])
        self.assertEqual(self.rows(f"?service={self.api.pk}"), [("api-pool", "a1", "lb1", "up")])
        # A rule that sends to the spare pool brings its members into the service's.
        Rule.objects.create(
            virtual_service=self.api, position=0, name="r", action="use_pool", pool=self.spare, conditions=[]
        )
        self.assertEqual(
            self.rows(f"?service={self.api.pk}"), [("api-pool", "a1", "lb1", "up"), ("spare", "x1", "lb1", "up")]
        )
        Rule.objects.update(enabled=False)
        self.assertEqual(self.rows(f"?service={self.api.pk}"), [("api-pool", "a1", "lb1", "up")])
        for nothing in (
            "?member=999999",
            "?service=999999",
            "?pool=99999999999999999999999",
            "?service=99999999999999999999999",
        ):
            self.assertEqual(self.rows(nothing), [], nothing)

    def test_pages(self):
        body = self.get("/api/v1/health/?limit=2&offset=1")
        self.assertEqual((body["count"], len(body["results"])), (5, 2))

    def test_events_newest_first_with_names(self):
        body = self.get("/api/v1/health-events/")
        got = [(e["node_name"], e["member_name"], e["previous"], e["status"]) for e in body["results"]]
        self.assertEqual(
            got,
            [
                ("lb1", "x1", "", "up"),
                ("lb1", "a1", "", "up"),
                ("lb1", "s2", "up", "down"),
                ("lb1", "s2", "", "up"),
                ("lb1", "s1", "", "up"),
                ("lb2", "s1", "", "up"),
            ],
        )
        down = next(e for e in body["results"] if e["status"] == "down")
        s2 = Member.objects.get(name="s2")
        self.assertEqual(
            {k: down[k] for k in ("member", "pool", "pool_name", "node", "at", "check", "code")},
            {
                "member": s2.pk,
                "pool": s2.pool_id,
                "pool_name": "web-pool",
                "node": self.lb1.pk,
                "at": "2026-03-01T12:00:10Z",
                "check": "L7STS",
                "code": 503,
            },
        )
        self.assertEqual(len(self.get(f"/api/v1/health-events/?member={s2.pk}")["results"]), 2)
        self.assertEqual(len(self.get(f"/api/v1/health-events/?pool={self.web.default_pool_id}")["results"]), 4)

    def test_bad_parameters_and_people_who_are_not_signed_in(self):
        for url, parameter in [
            ("/api/v1/health/?pool=abc", "pool"),
            ("/api/v1/health/?service=1.5", "service"),
            ("/api/v1/health/?member=-", "member"),
            ("/api/v1/health-events/?member=x", "member"),
        ]:
            answer = self.viewer.get(url)
            self.assertEqual(answer.status_code, 400, url)
            self.assertIn(parameter, answer.json())
        for url in ("/api/v1/health/", "/api/v1/health-events/"):
            self.assertIn(APIClient().get(url).status_code, (401, 403))
