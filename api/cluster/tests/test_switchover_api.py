"""POST /api/v1/cluster/switchover/: admins ask the management VIP's root side for a switchover
on its socket (cluster/handover.py). Here the socket's other end answers as
fulcrum-management's "request" does; tests/vm/image/test_join.py switches a real pair over
through this endpoint."""

import socket
import tempfile
import threading
from pathlib import Path

from django.db import connection
from django.test import override_settings
from rest_framework.test import APITransactionTestCase

from accounts.choices import Role
from accounts.models import AuditEntry
from accounts.tests.people import person

URL = "/api/v1/cluster/switchover/"


class RootSide(threading.Thread):
    """One connection on a Unix socket, answered with ``answers`` line by line; what it read,
    each line with the count of switchover audit entries then (committed: another connection)."""

    def __init__(self, path, *answers):
        super().__init__(daemon=True)
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(path)
        self.listener.listen(1)
        self.listener.settimeout(10)
        self.answers, self.read = list(answers), []

    def run(self):
        try:
            self.serve()
        finally:
            self.listener.close()
            connection.close()  # this thread's own, which counted the audit entries

    def serve(self):
        conn, _ = self.listener.accept()
        with conn, conn.makefile("rw", encoding="utf-8", newline="\n") as stream:
            for answer in self.answers:
                line = stream.readline()
                if not line:
                    return
                self.read.append((line.strip(), AuditEntry.objects.filter(action="cluster-switchover").count()))
                stream.write(answer + "\n")
                stream.flush()


class SwitchoverTests(APITransactionTestCase):
    def setUp(self):
        self.folder = Path(tempfile.mkdtemp())
        self.path = str(self.folder / "request.sock")
        self.settings_ = override_settings(FULCRUM_MANAGEMENT_SOCKET=self.path)
        self.settings_.enable()
        self.addCleanup(self.settings_.disable)
        self.client.force_authenticate(person("root", Role.ADMIN))

    def ask(self, *answers):
        root = RootSide(self.path, *answers)
        root.start()
        answer = self.client.post(URL)
        root.join(10)
        return answer, root.read

    def test_started_after_the_audit_entry(self):
        answer, read = self.ask("ready lb2", "started lb2")
        self.assertEqual(answer.status_code, 202, answer.data)
        self.assertEqual(answer.json()["standby"], "lb2")
        # "go" only once the entry was written (while the database takes changes)
        self.assertEqual(read, [("switchover", 0), ("go", 1)])
        entry = AuditEntry.objects.get(action="cluster-switchover")
        self.assertEqual((entry.status_code, entry.object_name, entry.actor_name), (202, "lb2", "root"))

    def test_a_refusal_is_the_root_sides_reason_and_starts_nothing(self):
        answer, read = self.ask("refused no synchronous standby to hand over to")
        self.assertEqual(answer.status_code, 409)
        self.assertEqual(answer.json()["detail"], "no synchronous standby to hand over to")
        self.assertEqual([line for line, _ in read], ["switchover"])
        self.assertEqual(AuditEntry.objects.get(action="cluster-switchover").status_code, 409)

    def test_no_root_side_is_a_clear_refusal(self):
        answer = self.client.post(URL)
        self.assertEqual(answer.status_code, 409)
        self.assertIn("no management VIP service", answer.json()["detail"])

    def test_a_root_side_that_fails_after_ready_is_audited_as_not_started(self):
        answer, read = self.ask("ready lb2", "refused the switchover could not be started (systemd-run)")
        self.assertEqual(answer.status_code, 409)
        self.assertEqual([line for line, _ in read], ["switchover", "go"])
        self.assertEqual(
            list(
                AuditEntry.objects.filter(action="cluster-switchover")
                .order_by("id")
                .values_list("status_code", flat=True)
            ),
            [202, 409],
        )

    def test_admins_only(self):
        for role in (Role.OPERATOR, Role.VIEWER):
            self.client.force_authenticate(person(f"p-{role}", role))
            self.assertEqual(self.client.post(URL).status_code, 403, role)
