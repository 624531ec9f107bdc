"""The role contract: viewer reads, operator reads and does what views list in
``operator_actions`` (member runtime, node standby, apply, rollback), admin does everything.
Every check goes through the real API with a real API token (and one with a session)."""

from rest_framework.test import APITestCase

from accounts.choices import Role
from accounts.tests.people import bearer, forget_throttles, person, signed_in
from cluster.models import Node
from services.models import Member, Pool

DENIED = 403


class RoleMatrixTest(APITestCase):
    def setUp(self):
        forget_throttles()
        self.pool = Pool.objects.create(name="web")
        self.member = Member.objects.create(pool=self.pool, name="m1", address="10.0.0.1", port=80)
        self.node = Node.objects.create(name="lb1", token_hash="x" * 64)
        self.clients = {role: bearer(person(role, role))[0] for role in Role.values}

    def status(self, role, method, url, body=None):
        return getattr(self.clients[role], method)(url, body, format="json").status_code

    def test_everyone_reads(self):
        for role in Role.values:
            for url in ("/api/v1/pools/", f"/api/v1/pools/{self.pool.pk}/", "/api/v1/members/", "/api/v1/nodes/"):
                self.assertEqual(self.status(role, "get", url), 200, (role, url))
            self.assertEqual(self.clients[role].options("/api/v1/pools/").status_code, 200, role)
            self.assertEqual(self.clients[role].head("/api/v1/pools/").status_code, 200, role)

    def test_only_admins_create_update_and_delete(self):
        pool_url = f"/api/v1/pools/{self.pool.pk}/"
        for role in (Role.VIEWER, Role.OPERATOR):
            self.assertEqual(self.status(role, "post", "/api/v1/pools/", {"name": "new"}), DENIED, role)
            self.assertEqual(self.status(role, "patch", pool_url, {"name": "renamed"}), DENIED, role)
            self.assertEqual(self.status(role, "put", pool_url, {"name": "renamed"}), DENIED, role)
            self.assertEqual(self.status(role, "delete", f"/api/v1/members/{self.member.pk}/"), DENIED, role)
            self.assertEqual(self.status(role, "put", "/api/v1/ipvs-sync/", {"enabled": True}), DENIED, role)
        self.pool.refresh_from_db()
        self.assertEqual(self.pool.name, "web")
        self.assertEqual(Pool.objects.count(), 1)
        self.assertTrue(Member.objects.filter(pk=self.member.pk).exists())
        self.assertEqual(self.status(Role.ADMIN, "post", "/api/v1/pools/", {"name": "new"}), 201)
        self.assertEqual(self.status(Role.ADMIN, "patch", pool_url, {"name": "renamed"}), 200)
        self.assertEqual(self.status(Role.ADMIN, "delete", f"/api/v1/members/{self.member.pk}/"), 204)

    def test_member_runtime_is_for_operators_and_admins(self):
        url = f"/api/v1/members/{self.member.pk}/runtime/"
        self.assertEqual(self.status(Role.VIEWER, "post", url, {"state": "drain"}), DENIED)
        # Past the permission layer: refused by the publish check (nothing is live yet).
        for role in (Role.OPERATOR, Role.ADMIN):
            response = self.clients[role].post(url, {"state": "drain"}, format="json")
            self.assertEqual(response.status_code, 409, (role, response.data))
            self.assertIn("not in the live configuration", str(response.data["problems"]))

    def test_node_standby_is_for_operators_and_admins(self):
        url = f"/api/v1/nodes/{self.node.pk}/standby/"
        self.assertEqual(self.status(Role.VIEWER, "post", url, {"standby": True}), DENIED)
        for role in (Role.OPERATOR, Role.ADMIN):
            self.assertNotIn(self.status(role, "post", url, {"standby": True}), (401, DENIED), role)

    def test_apply_is_for_operators_and_admins(self):
        self.assertEqual(self.status(Role.VIEWER, "post", "/api/v1/revisions/", {"message": "go"}), DENIED)
        for role in (Role.OPERATOR, Role.ADMIN):
            self.assertNotIn(self.status(role, "post", "/api/v1/revisions/", {"message": "go"}), (401, DENIED), role)

    def test_people_and_the_audit_log(self):
        for role in (Role.VIEWER, Role.OPERATOR):
            self.assertEqual(self.status(role, "get", "/api/v1/users/"), DENIED, role)  # admin_only, even reading
        self.assertEqual(self.status(Role.ADMIN, "get", "/api/v1/users/"), 200)
        self.assertEqual(self.status(Role.VIEWER, "get", "/api/v1/audit/"), DENIED)
        self.assertEqual(self.status(Role.OPERATOR, "get", "/api/v1/audit/"), 200)
        self.assertEqual(self.status(Role.ADMIN, "get", "/api/v1/audit/"), 200)

    def test_a_token_never_acts_above_its_role_or_its_owner(self):
        admin = person("boss", Role.ADMIN)
        viewer_token, _, _ = bearer(admin, role=Role.VIEWER)
        self.assertEqual(viewer_token.post("/api/v1/pools/", {"name": "x"}, format="json").status_code, DENIED)
        # The owner is demoted: the admin token they hold acts as operator from now on.
        admin_token, _, _ = bearer(admin, role=Role.ADMIN)
        admin.profile.role = Role.OPERATOR
        admin.profile.save()
        self.assertEqual(admin_token.post("/api/v1/pools/", {"name": "x"}, format="json").status_code, DENIED)
        url = f"/api/v1/members/{self.member.pk}/runtime/"
        self.assertEqual(admin_token.post(url, {"state": "drain"}, format="json").status_code, 409)

    def test_a_superuser_is_admin_whatever_the_row_says(self):
        root = person("root", Role.VIEWER, is_superuser=True)
        client, _, _ = bearer(root, role=Role.ADMIN)
        self.assertEqual(client.post("/api/v1/pools/", {"name": "x"}, format="json").status_code, 201)

    def test_sessions_follow_the_same_contract(self):
        client = signed_in(Role.OPERATOR, password="correct horse battery", enforce_csrf_checks=False)
        self.assertEqual(client.post("/api/v1/pools/", {"name": "x"}, format="json").status_code, DENIED)
        self.assertEqual(client.get("/api/v1/pools/").status_code, 200)

    def test_anonymous_and_node_agents_are_not_people(self):
        from rest_framework.test import APIClient

        anonymous = APIClient()
        self.assertEqual(anonymous.get("/api/v1/pools/").status_code, 401)
        token = self.node.rotate_token()
        self.node.save()
        agent = APIClient()
        agent.credentials(HTTP_AUTHORIZATION=f"Node {token}")
        self.assertEqual(agent.get("/api/v1/pools/").status_code, 401)
