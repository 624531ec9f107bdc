"""The dependency audit (unit tier): every program the host runs is installed by deps.sh or is
part of the base system, and the manifest deps.sh installs from is true of this host."""

import pytest

from tests.deps import audit
from tests.deps.commands import Use, go_uses, host_uses, makefile_uses, python_uses, shell_uses


@pytest.fixture(scope="module")
def uses():
    return host_uses()


@pytest.fixture(scope="module")
def entries():
    return audit.read_manifest()


def test_every_program_the_host_runs_is_installed_by_deps_or_is_base(uses, entries):
    problems = audit.check_uses(uses, entries)
    assert not problems, "\n".join(problems)


def test_each_line_of_the_manifest_is_true_of_this_host(entries):
    problems = audit.check_manifest(entries)
    assert not problems, "\n".join(problems)


def test_the_scan_finds_what_the_tiers_are_known_to_run(uses):
    # One of each kind of caller: Go tests, Python harnesses and tests, shell scripts, Makefiles.
    known = {"haproxy", "keepalived", "nft", "socat", "xorriso", "qemu-system-x86_64", "qemu-img", "mmdebstrap",
             "psql", "initdb", "lintian", "packer", "mksquashfs", "cc", "npm", "/usr/bin/chromium"}  # fmt: skip
    assert known <= set(uses), known - set(uses)
    # Shell functions are not programs, those of a file the scripts source included.
    assert not {"unmount_below", "root_processes", "log", "die"} & set(uses)


def test_a_program_that_nothing_installs_is_reported(entries):
    place = [Use("fulcrum-no-such-program", "tests/somewhere.py", 3)]
    problems = audit.check_uses({"fulcrum-no-such-program": place}, entries)
    assert (
        len(problems) == 1 and "fulcrum-no-such-program (run at tests/somewhere.py:3) is not installed" in problems[0]
    )
    # haproxy is installed here (deps.sh), from a package outside the base system: without its line, reported.
    without = [e for e in entries if e.package != "haproxy"]
    problems = audit.check_uses({"haproxy": [Use("haproxy", "tests/netns/test_loadd_haproxy.py", 89)]}, without)
    assert len(problems) == 1 and "package haproxy, priority optional" in problems[0], problems
    # A base program (coreutils, priority required) needs no line.
    assert audit.check_uses({"sha256sum": place}, entries) == []


def test_a_false_manifest_line_is_reported():
    wrong = audit.Entry("demo", "haproxy", ("xorriso",), 7)
    assert audit.check_manifest([wrong]) == ["packages.txt:7: the package haproxy does not provide xorriso"]


@pytest.mark.parametrize(
    "line, programs",
    [
        ("timeout --kill-after=10 30 qemu-system-x86_64 -m 1", ["timeout", "qemu-system-x86_64"]),
        ("ip netns exec fc-cl curl -s http://x/ | grep -q ok", ["ip", "curl", "grep"]),
        ("runuser -u postgres -- psql -c 'select 1'", ["runuser", "psql"]),
        ("unshare --mount --propagation private -- pivot_root . old", ["unshare", "pivot_root"]),
        ("sh -c 'socat - TCP:x:1; xorriso -version' && chroot \"$root\" apt-get install x", ["sh", "socat", "xorriso", "chroot"]),
        ('A=1 B=$x/y-$z.log packer build t.pkr.hcl', ["packer"]),
        ('"$GO" build ./...; f() { lintian "$1"; }; f x', ["lintian"]),
        ("[[ -x $p ]] || echo no; read -r a; cd /; local x", []),
    ],
)  # fmt: skip
def test_shell_commands_are_read_through_wrappers(line, programs):
    assert [use.command for use in shell_uses(line, "x.sh")] == programs


def test_python_go_and_make_callers_are_read():
    python = """
import subprocess, shutil
HAPROXY = os.environ.get("FULCRUM_HAPROXY", "haproxy")
VIP = "10.0.0.1"
subprocess.run(["ip", "netns", "exec", ns, "nginx", "-c", conf], check=True)
subprocess.run([HAPROXY, "-c", "-f", path])
argv = [_bin("pg_ctl"), "start"]
lab.exec("cl", ["wrk", "-t1"])
subprocess.run("xmllint --noout x | sha256sum", shell=True)
subprocess.Popen([*lab.lb_exec_prefix, "socat", "TCP-LISTEN:1", "SYSTEM:echo"])
print([VIP, 80])
"""
    assert sorted({u.command for u in python_uses(python, "t.py")}) == [
        "haproxy", "ip", "nginx", "pg_ctl", "sha256sum", "socat", "wrk", "xmllint"
    ]  # fmt: skip
    go = 'exec.Command("ip", "-n", ns, "link"); exec.CommandContext(ctx, "unshare", "-r", "nft", "-c"); ' \
         'b, _ := exec.LookPath("keepalived"); o := opts{haproxyBin: "haproxy"}'  # fmt: skip
    assert sorted({u.command for u in go_uses(go, "x.go")}) == ["haproxy", "ip", "keepalived", "nft", "unshare"]
    make = (
        "test:\n\t$(CC) -o t t.c && ./t\n\t@out=$$(gofmt -l .); echo $$out\ncheck:\n\t$(MAKE) -C $(KDIR) M=$(CURDIR)\n"
    )
    assert [u.command for u in makefile_uses(make, "Makefile")] == ["cc", "gofmt", "make"]
