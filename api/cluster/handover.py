"""The API's way to the management VIP's root side (appliance/api/fulcrum-management): a
switchover stops PostgreSQL and restarts services, root's work, so the API (user fulcrum)
asks for it on fulcrum-management-request.socket, one line at a time:

    API: switchover         root: ready STANDBY | refused WHY
    API: go                 root: started STANDBY | refused WHY

"ready" means this appliance holds the management VIP and has a synchronous standby to
hand it to; between "ready" and "go" the API writes its audit entry, while its database
still takes changes. "started": the switchover runs (unit fulcrum-management-switchover);
within seconds this database is fenced, then the standby holds the VIP and takes changes.
"""

import socket

from django.conf import settings

TIMEOUT_S = 30  # the root side's checks are a few queries; it gives up on silence after 10 s


class Refused(Exception):
    """No switchover: why, for the operator."""


def _answer(stream, expected):
    word, _, rest = stream.readline().strip().partition(" ")
    if word == expected and rest:
        return rest
    if word == "refused" and rest:
        raise Refused(rest[:500])
    raise Refused("fulcrum-management gave no answer (see its journal: journalctl -u 'fulcrum-management-request@*')")


def switchover(on_ready):
    """Ask for a switchover; ``on_ready(standby)`` runs once the root side can do it, before
    it starts. Returns the standby that takes over; raises ``Refused``."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(TIMEOUT_S)
    try:
        sock.connect(settings.FULCRUM_MANAGEMENT_SOCKET)
    except OSError as err:
        sock.close()
        raise Refused(
            "This appliance has no management VIP service to ask (a single appliance, or "
            f"fulcrum-management-request.socket is not running): {err.strerror or err}"
        ) from err
    try:
        with sock, sock.makefile("rw", encoding="utf-8", newline="\n") as stream:
            stream.write("switchover\n")
            stream.flush()
            standby = _answer(stream, "ready")
            on_ready(standby)
            stream.write("go\n")
            stream.flush()
            return _answer(stream, "started")
    except OSError as err:  # a timeout, a closed connection
        raise Refused(f"fulcrum-management did not answer: {err}") from err
