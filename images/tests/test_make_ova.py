"""images/scripts/make-ova.sh on a small disk: the OVA holds what VMware and VirtualBox read.

A 64 MiB qcow2 with data in two places is packed, then the OVA is read back with tar,
ElementTree, hashlib and qemu-img (`make deps-image` installs qemu-utils and libxml2-utils).
Runs in seconds: `.venv/bin/pytest images/tests/test_make_ova.py`.
"""

import hashlib
import json
import os
import re
import subprocess
import tarfile
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

MAKE_OVA = Path(__file__).resolve().parents[1] / "scripts" / "make-ova.sh"
NS = {
    "ovf": "http://schemas.dmtf.org/ovf/envelope/1",
    "rasd": "http://schemas.dmtf.org/wbem/wscim/1/cim-schema/2/CIM_ResourceAllocationSettingData",
    "vssd": "http://schemas.dmtf.org/wbem/wscim/1/cim-schema/2/CIM_VirtualSystemSettingData",
}
OVF = "{http://schemas.dmtf.org/ovf/envelope/1}"
VERSION = "1.2.3~git4.gabcdef+dirty"
DISK_BYTES = 64 << 20


def qemu_img_info(path):
    out = subprocess.run(["qemu-img", "info", "--output=json", str(path)], check=True, capture_output=True)
    return json.loads(out.stdout)


@pytest.fixture
def disk(tmp_path):
    raw = tmp_path / "disk.raw"
    with open(raw, "wb") as f:
        f.truncate(DISK_BYTES)
        f.seek(1 << 20)
        f.write(b"fulcrum " * 4096)
        f.seek(40 << 20)
        f.write(os.urandom(1 << 20))
    qcow2 = tmp_path / "disk.qcow2"
    subprocess.run(["qemu-img", "convert", "-O", "qcow2", str(raw), str(qcow2)], check=True)
    raw.unlink()
    return qcow2


@pytest.fixture
def unpacked(disk, tmp_path):
    """Packs the disk; returns (folder with the OVA's files, tar member names, the OVF root)."""
    out = tmp_path / "out"
    out.mkdir()
    ova = out / "fulcrum.ova"
    subprocess.run([str(MAKE_OVA), str(disk), str(ova), VERSION], check=True, capture_output=True)
    assert sorted(p.name for p in out.iterdir()) == ["fulcrum.ova"], "work files left behind"
    folder = tmp_path / "unpacked"
    with tarfile.open(ova) as tar:
        members = tar.getmembers()
        assert all(m.isfile() and m.uid == 0 and m.gid == 0 for m in members)
        tar.extractall(folder, filter="data")
    return folder, [m.name for m in members], ET.parse(folder / "fulcrum.ovf").getroot()


def test_descriptor_first_then_manifest_then_the_disk(unpacked):
    _, names, _ = unpacked
    assert names == ["fulcrum.ovf", "fulcrum.mf", "fulcrum-disk1.vmdk"]


def test_manifest_holds_the_sha256_of_every_other_file(unpacked):
    folder, _, _ = unpacked
    lines = (folder / "fulcrum.mf").read_text().splitlines()
    digests = dict(re.fullmatch(r"SHA256\((.+)\)= ([0-9a-f]{64})", line).groups() for line in lines)
    assert set(digests) == {"fulcrum.ovf", "fulcrum-disk1.vmdk"}
    for name, digest in digests.items():
        assert hashlib.sha256((folder / name).read_bytes()).hexdigest() == digest


def test_vmdk_is_stream_optimized_and_the_same_disk(unpacked, disk):
    folder, _, _ = unpacked
    vmdk = folder / "fulcrum-disk1.vmdk"
    info = qemu_img_info(vmdk)
    assert info["format"] == "vmdk"
    assert info["format-specific"]["data"]["create-type"] == "streamOptimized"
    assert info["virtual-size"] == DISK_BYTES
    assert subprocess.run(["qemu-img", "compare", "-q", str(disk), str(vmdk)]).returncode == 0


def test_disk_section_describes_the_vmdk(unpacked, disk):
    folder, _, ovf = unpacked
    file_ref = ovf.find("ovf:References/ovf:File", NS)
    assert file_ref.get(f"{OVF}href") == "fulcrum-disk1.vmdk"
    assert int(file_ref.get(f"{OVF}size")) == (folder / "fulcrum-disk1.vmdk").stat().st_size
    disk_el = ovf.find("ovf:DiskSection/ovf:Disk", NS)
    assert disk_el.get(f"{OVF}fileRef") == file_ref.get(f"{OVF}id")
    assert disk_el.get(f"{OVF}format").endswith("vmdk.html#streamOptimized")
    assert int(disk_el.get(f"{OVF}capacity")) == DISK_BYTES
    # populatedSize: the bytes that hold data, as qemu-img maps the source
    mapped = json.loads(subprocess.run(["qemu-img", "map", "--output=json", str(disk)], capture_output=True).stdout)
    populated = int(disk_el.get(f"{OVF}populatedSize"))
    assert populated == sum(e["length"] for e in mapped if e["data"])
    assert (1 << 20) < populated < DISK_BYTES


def items_by_type(ovf):
    items = {}
    for item in ovf.findall("ovf:VirtualSystem/ovf:VirtualHardwareSection/ovf:Item", NS):
        items.setdefault(item.find("rasd:ResourceType", NS).text, []).append(item)
    return items


def test_virtual_hardware_two_cpus_4gib_scsi_disk_and_a_nic_on_the_network(unpacked):
    _, _, ovf = unpacked
    items = items_by_type(ovf)
    assert items["3"][0].find("rasd:VirtualQuantity", NS).text == "2"  # CPUs
    memory = items["4"][0]
    assert (memory.find("rasd:VirtualQuantity", NS).text, memory.find("rasd:AllocationUnits", NS).text) == (
        "4096",
        "byte * 2^20",
    )
    (controller,) = items["6"]
    assert controller.find("rasd:ResourceSubType", NS).text == "lsilogic"
    (hard_disk,) = items["17"]
    assert hard_disk.find("rasd:Parent", NS).text == controller.find("rasd:InstanceID", NS).text
    disk_id = ovf.find("ovf:DiskSection/ovf:Disk", NS).get(f"{OVF}diskId")
    assert hard_disk.find("rasd:HostResource", NS).text == f"ovf:/disk/{disk_id}"
    (nic,) = items["10"]
    network = ovf.find("ovf:NetworkSection/ovf:Network", NS).get(f"{OVF}name")
    assert nic.find("rasd:Connection", NS).text == network == "VM Network"
    ids = [i.find("rasd:InstanceID", NS).text for group in items.values() for i in group]
    assert len(ids) == len(set(ids))


def test_product_section_carries_the_version(unpacked):
    _, _, ovf = unpacked
    product = ovf.find("ovf:VirtualSystem/ovf:ProductSection", NS)
    assert product.find("ovf:Version", NS).text == VERSION
    assert product.find("ovf:FullVersion", NS).text == VERSION


@pytest.mark.parametrize("version", ["1.0</Version><x>", "1.0 beta", "1.0\nx", ""])
def test_refuses_a_version_that_is_not_a_plain_version_and_writes_nothing(disk, tmp_path, version):
    ova = tmp_path / "fulcrum.ova"
    result = subprocess.run([str(MAKE_OVA), str(disk), str(ova), version], capture_output=True, text=True)
    assert result.returncode != 0
    assert "version" in result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["disk.qcow2"]
