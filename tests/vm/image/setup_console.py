"""Answer the appliance's first-boot setup (appliance/firstboot/fulcrum_setup.py) on its serial
console, as an operator types it: one bad answer first, to see it refused and asked again.
"""

import time

from tests.vm.image.appliance import DNS, GATEWAY, MGMT, MGMT_VIP, PREFIX

HOSTNAME = "lb-accept"
ADMIN_PASSWORD = "Fulcrum-accept-9"
FIRST_PROMPT_TIMEOUT = 900  # boot under TCG, first-boot keys, then the setup's first question


def answer_setup(serial):
    """Drive the setup to its end; return what happened ({'refused': bool, 'prompt_seconds': float})."""
    started = time.monotonic()
    serial.expect(r"Management interface \[(\S+)\]: ", timeout=FIRST_PROMPT_TIMEOUT)
    prompt_seconds = time.monotonic() - started
    serial.sendline("")  # the first (only) interface
    serial.expect(r"Management address \(CIDR")
    serial.sendline(f"{MGMT}/33")  # refused: prefix too long
    refused = serial.expect([r"Invalid: [^\r\n]+", r"Default gateway"]) == 0
    serial.expect(r"Management address \(CIDR")
    serial.sendline(f"{MGMT}/{PREFIX}")
    serial.expect(r"Default gateway \(empty for none\)[^:]*: ")
    serial.sendline(GATEWAY)
    serial.expect(r"DNS servers[^:]*: ")
    serial.sendline(DNS)
    serial.expect(r"Hostname[^:]*: ")
    serial.sendline(HOSTNAME)
    serial.expect(r"Start a new cluster or join one\? \(new/join\)[^:]*: ")
    serial.sendline("")  # a new cluster
    serial.expect(r"Management VIP[^:]*: ")
    serial.sendline(MGMT_VIP)
    serial.expect(r"Admin password \(at least \d+ characters\): ")
    serial.sendline(ADMIN_PASSWORD)
    serial.expect(r"Admin password again: ")
    serial.sendline(ADMIN_PASSWORD)
    serial.expect(r"Apply these settings\? \[yes/no\]: ")
    serial.sendline("yes")
    # Applying starts the API (database, migrations) under TCG: minutes. Then the login prompt.
    serial.expect(r"login: ", timeout=900)
    return {"refused": refused, "prompt_seconds": prompt_seconds}
