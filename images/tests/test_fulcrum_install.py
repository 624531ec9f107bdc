"""images/scripts/fulcrum-install refuses what is not a whole, unused disk, and touches nothing.

Only the refusals can run on a build host (as root; a loop device stands for a device that
is not a disk). The installation itself is proven by images/build.sh: Packer boots the ISO,
the installer writes the disk unattended, and the check stage boots the result.
"""

import hashlib
import os
import subprocess
from pathlib import Path

import pytest

INSTALL = Path(__file__).resolve().parents[1] / "scripts" / "fulcrum-install"

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="the installer runs as root")


def run_install(*args):
    return subprocess.run([str(INSTALL), *args], capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--unattended"], "--unattended needs --disk DISK or --from-cmdline"),
        (["--unattended", "--disk", "/dev/null"], "/dev/null is not a block device"),
        (["--unattended", "--disk", "/etc/passwd"], "/etc/passwd is not a block device"),
        (["--unattended", "--disk", "/dev/../etc/hostname"], "/etc/hostname is not a block device"),
    ],
)
def test_refuses_what_is_not_a_disk(args, message):
    result = run_install(*args)
    assert result.returncode == 1
    assert f"fulcrum-install: error: {message}" in result.stderr


def test_refuses_without_fulcrum_install_on_the_kernel_command_line():
    assert "fulcrum.install=" not in Path("/proc/cmdline").read_text()
    result = run_install("--unattended", "--from-cmdline")
    assert result.returncode == 1
    assert "no fulcrum.install=DISK on the kernel command line" in result.stderr


def test_unknown_argument_is_a_usage_error():
    result = run_install("--disk-is", "/dev/vda")
    assert result.returncode == 2
    assert "unknown argument: --disk-is" in result.stderr
    assert "Usage:" in result.stderr


@pytest.fixture
def loop_device(tmp_path):
    backing = tmp_path / "disk.img"
    with open(backing, "wb") as f:
        f.truncate(64 << 20)
        f.write(b"data that must survive " * 1000)
    device = subprocess.run(
        ["losetup", "--find", "--show", str(backing)], capture_output=True, text=True, check=False
    ).stdout.strip()
    if not device:
        pytest.skip("no loop device here")
    yield device, backing
    subprocess.run(["losetup", "--detach", device], check=True)


def test_refuses_a_device_that_is_not_a_whole_disk_and_leaves_it_alone(loop_device):
    device, backing = loop_device
    before = hashlib.sha256(backing.read_bytes()).hexdigest()
    result = run_install("--unattended", "--disk", device)
    assert result.returncode == 1
    assert f"fulcrum-install: error: {device} is a loop, not a whole disk" in result.stderr
    assert "partitioning" not in result.stdout
    assert hashlib.sha256(backing.read_bytes()).hexdigest() == before
