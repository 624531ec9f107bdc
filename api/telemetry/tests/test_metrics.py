"""GET /metrics/services/ and /metrics/members/: buckets, rates, gauges, windows and parameters."""

from datetime import timedelta

from rest_framework.test import APIClient, APITestCase

from accounts.choices import Role
from accounts.tests.people import person
from services.models import Member, Pool
from telemetry.models import TrafficSample
from telemetry.tests.helpers import T0, agent, at, clock, figures, member_entry, post, report, service_with_pool


def iso(when):
    return when.isoformat().replace("+00:00", "Z")


class MetricsTest(APITestCase):
    """A known sequence of reports from two nodes, read back at 12:01:30."""

    def setUp(self):
        self.web = service_with_pool("web")
        self.api = service_with_pool("api", subnet=2)
        self.viewer = APIClient()
        self.viewer.force_authenticate(person("vera", Role.VIEWER))
        _, lb1 = agent("lb1")
        _, lb2 = agent("lb2")

        def web(connections, requests, errors=0, bytes_in=1000, bytes_out=5000):
            return {"service": "web", **figures(connections, requests, errors, bytes_in, bytes_out)}

        def s1(connections, requests):
            return member_entry("web-pool", "s1", connections=connections, requests=requests)

        for client, seconds, service, member in [
            (lb1, 5, web(5, 100, 1), s1(2, 50)),
            (lb2, 10, web(3, 50), s1(1, 20)),
            (lb1, 15, web(6, 200), s1(3, 100)),
            (lb1, 25, web(7, 300, 2), s1(4, 150)),
            (lb1, 65, web(2, 60), s1(1, 30)),
        ]:
            self.assertEqual(post(client, report([service], [member]), at(seconds)).status_code, 204)

    def get(self, url, now=None):
        with clock(now or at(90)):
            return self.viewer.get(url)

    def series(self, url, name="web"):
        answer = self.get(url)
        self.assertEqual(answer.status_code, 200, answer.content)
        return next(s for s in answer.json()["series"] if s["name"] == name)

    def test_minute_buckets_add_the_nodes_rates_and_latest_gauges(self):
        answer = self.get("/api/v1/metrics/services/?minutes=60&step=60")
        body = answer.json()
        # 60 minutes before 12:01:30 is 11:01:30: the first bucket starts at 11:01:00.
        self.assertEqual((body["step_s"], body["start"], body["end"]), (60, iso(at(-3540)), iso(at(90))))
        web = next(s for s in body["series"] if s["name"] == "web")
        self.assertEqual(web["id"], self.web.pk)
        self.assertEqual(
            web["points"],
            [
                # lb1: 600 requests, 3 errors, 3000/15000 bytes over 30 s; lb2: 50 requests over 10 s.
                {
                    "t": iso(T0),
                    "connections": 7 + 3,
                    "requests_per_s": 20.0 + 5.0,
                    "errors_per_s": 0.1,
                    "bytes_in_per_s": 100.0 + 100.0,
                    "bytes_out_per_s": 500.0 + 500.0,
                },
                {
                    "t": iso(at(60)),
                    "connections": 2,
                    "requests_per_s": 6.0,
                    "errors_per_s": 0.0,
                    "bytes_in_per_s": 100.0,
                    "bytes_out_per_s": 500.0,
                },
            ],
        )
        self.assertEqual([s["name"] for s in body["series"]], ["api", "web"])  # every service, by name
        self.assertEqual(next(s for s in body["series"] if s["name"] == "api")["points"], [])

    def test_ten_second_buckets_and_gaps(self):
        web = self.series("/api/v1/metrics/services/?step=10")
        got = [(p["t"], p["connections"], p["requests_per_s"]) for p in web["points"]]
        self.assertEqual(
            got,
            [
                (iso(at(0)), 5, 10.0),
                (iso(at(10)), 6 + 3, 20.0 + 5.0),
                (iso(at(20)), 7, 30.0),
                # 12:00:30 to 12:00:59: no samples, no points (a gap)
                (iso(at(60)), 2, 6.0),
            ],
        )

    def test_the_window_starts_at_the_bucket_holding_its_start(self):
        web = self.series("/api/v1/metrics/services/?minutes=1&step=10")
        self.assertEqual([p["t"] for p in web["points"]], [iso(at(60))])
        # 2 minutes before 12:01:30 is 11:59:30, in the 5-minute bucket of 11:55.
        answer = self.get("/api/v1/metrics/services/?minutes=2&step=300")
        self.assertEqual(answer.json()["start"], iso(T0 - timedelta(minutes=5)))
        web = next(s for s in answer.json()["series"] if s["name"] == "web")
        self.assertEqual([p["t"] for p in web["points"]], [iso(T0)])
        # lb1: 660 requests over 40 s; lb2: 50 over 10 s.
        self.assertEqual(web["points"][0]["requests_per_s"], 16.5 + 5.0)

    def test_one_service(self):
        answer = self.get(f"/api/v1/metrics/services/?service={self.api.pk}")
        self.assertEqual([s["name"] for s in answer.json()["series"]], ["api"])
        for unknown in (999_999, 99999999999999999999999):
            answer = self.get(f"/api/v1/metrics/services/?service={unknown}")
            self.assertEqual((answer.status_code, answer.json()["series"]), (200, []))

    def test_members_of_one_pool(self):
        pool = Pool.objects.get(name="web-pool")
        answer = self.get(f"/api/v1/metrics/members/?pool={pool.pk}&step=60")
        self.assertEqual(answer.status_code, 200, answer.content)
        series = {s["name"]: s for s in answer.json()["series"]}
        self.assertEqual(set(series), {"s1", "s2"})
        self.assertEqual(series["s1"]["id"], Member.objects.get(pool=pool, name="s1").pk)
        first = series["s1"]["points"][0]
        # lb1: 300 requests over 30 s; lb2: 20 over 10 s. Connections: lb1's latest 4 + lb2's 1.
        self.assertEqual((first["t"], first["requests_per_s"], first["connections"]), (iso(T0), 12.0, 5))
        self.assertEqual(series["s2"]["points"], [])
        other = Pool.objects.get(name="api-pool")
        self.assertEqual(
            [s["points"] for s in self.get(f"/api/v1/metrics/members/?pool={other.pk}").json()["series"]], [[], []]
        )

    def test_old_samples_are_outside_every_window(self):
        later = at(90) + timedelta(minutes=62)  # the window starts at 12:03, after the last report
        answer = self.get("/api/v1/metrics/services/?minutes=60&step=60", now=later)
        web = next(s for s in answer.json()["series"] if s["name"] == "web")
        self.assertEqual(web["points"], [])
        self.assertEqual(TrafficSample.objects.count(), 10)  # reading prunes nothing

    def test_bad_parameters_are_400_on_the_parameter(self):
        pool = Pool.objects.get(name="web-pool")
        for url, parameter in [
            ("/api/v1/metrics/services/?minutes=0", "minutes"),
            ("/api/v1/metrics/services/?minutes=61", "minutes"),
            ("/api/v1/metrics/services/?minutes=abc", "minutes"),
            ("/api/v1/metrics/services/?step=15", "step"),
            ("/api/v1/metrics/services/?step=", "step"),
            ("/api/v1/metrics/services/?service=x", "service"),
            ("/api/v1/metrics/members/", "pool"),
            ("/api/v1/metrics/members/?pool=abc", "pool"),
            (f"/api/v1/metrics/members/?pool={pool.pk}&step=3600", "step"),
        ]:
            answer = self.get(url)
            self.assertEqual(answer.status_code, 400, url)
            self.assertIn(parameter, answer.json(), url)

    def test_people_must_sign_in(self):
        for url in ("/api/v1/metrics/services/", "/api/v1/metrics/members/?pool=1"):
            self.assertIn(APIClient().get(url).status_code, (401, 403))
