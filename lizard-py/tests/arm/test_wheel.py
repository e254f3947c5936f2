"""The lizard_rs imported here is the aarch64 wheel CI built, as pip installed it: its bytes are the ones
whose checksum the build recorded, its files are those its RECORD lists, and its metadata names its
platform, the Python versions and the licence."""

import hashlib
import base64
import importlib.metadata
import os
import platform
import sys
from pathlib import Path

import lizard_rs
from conftest import skip
from guest import note, on_arm


def installed():
    """The wheel file and the folder pip installed it into (set by .ci/python-arm-tests), after checking."""
    on_arm()
    wheel, site = os.environ.get("LIZARD_WHEEL"), os.environ.get("LIZARD_WHEEL_SITE")
    if not wheel or not site:
        skip("LIZARD_WHEEL and LIZARD_WHEEL_SITE do not name the wheel and where pip installed it")
    return Path(wheel), Path(site)


def test_the_module_is_the_wheel_ci_built_as_pip_installed_it():
    wheel, site = installed()
    digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
    assert digest == os.environ.get("LIZARD_WHEEL_SHA256"), "the wheel is the one whose checksum was recorded"
    assert Path(lizard_rs.__file__).resolve().parent == (site / "lizard_rs").resolve(), lizard_rs.__file__
    native = Path(lizard_rs._native.__file__)
    assert native.name == "_native.abi3.so", native
    header = native.read_bytes()[:20]
    assert header[:4] == b"\x7fELF" and int.from_bytes(header[18:20], "little") == 183, "an aarch64 ELF"
    dist = importlib.metadata.distribution("lizard-rs")
    assert dist.version == lizard_rs.__version__
    # Every file pip installed is the wheel's, byte for byte (RECORD's sha256 of each).
    checked = 0
    for entry in dist.files:
        if entry.hash is None:
            continue
        data = (Path(dist.locate_file(entry))).read_bytes()
        want = entry.hash.value
        got = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        assert got == want, entry
        checked += 1
    assert checked >= 6
    note(
        f"lizard_rs {lizard_rs.__version__} imported on CPython {platform.python_version()} "
        f"({sys.implementation.cache_tag}, {platform.machine()}) from the wheel pip installed: {wheel.name}, "
        f"sha256 {digest[:16]}…, as recorded at its build; {checked} files match its RECORD"
    )


def test_the_metadata_names_the_platform_the_python_versions_and_the_licence():
    installed()
    dist = importlib.metadata.distribution("lizard-rs")
    meta = dist.metadata
    assert meta["Requires-Python"] == ">=3.9"
    assert meta["License-Expression"] == "MIT OR Apache-2.0"
    assert {"LICENSE-MIT", "LICENSE-APACHE"} <= {Path(f).name for f in meta.get_all("License-File")}
    assert "numpy>=1.21" in dist.requires
    classifiers = meta.get_all("Classifier")
    assert "Operating System :: POSIX :: Linux" in classifiers
    assert "Programming Language :: Python :: 3.9" in classifiers
    tags = [line.split(": ", 1)[1] for line in dist.read_text("WHEEL").splitlines() if line.startswith("Tag: ")]
    assert sorted(tags) == ["cp39-abi3-manylinux2014_aarch64", "cp39-abi3-manylinux_2_17_aarch64"], tags
    note(
        f"wheel metadata: tags {', '.join(sorted(tags))}; Requires-Python {meta['Requires-Python']}; "
        f"License-Expression {meta['License-Expression']} with its two licence files; requires numpy>=1.21"
    )
