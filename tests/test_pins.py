"""requirements/lock.txt pins what a fresh clone installs (scripts/pins.py makes it): every
requirement the project states is in it at a version the requirement allows, and the README's
install commands, which CI runs, use it."""

import ast
import re
from pathlib import Path

import pytest
from packaging.markers import Marker
from packaging.requirements import Requirement
from packaging.version import Version

tomllib = pytest.importorskip("tomllib", reason="reads pyproject.toml with tomllib: Python 3.11 and newer")

ROOT = Path(__file__).resolve().parent.parent
LOCK = ROOT / "requirements" / "lock.txt"
#: The Pythons the lock is for (pyproject.toml: requires-python >= 3.10), on each platform.
ENVIRONMENTS = [{"python_version": version, "python_full_version": f"{version}.0", "sys_platform": platform,
                 "platform_system": system, "os_name": "nt" if platform == "win32" else "posix"}
                for version in ("3.10", "3.11", "3.12", "3.13")
                for platform, system in (("linux", "Linux"), ("darwin", "Darwin"), ("win32", "Windows"))]


def stated_requirements() -> list[Requirement]:
    """What pyproject.toml's extras and setup.py's install requirements ask for."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    stated = [text for extra in project["optional-dependencies"].values() for text in extra]
    setup = ast.parse((ROOT / "setup.py").read_text())
    constants = {target.id: node.value for node in setup.body if isinstance(node, ast.Assign)
                 for target in node.targets if isinstance(target, ast.Name)}
    stated += ast.literal_eval(constants["REQUIRES"]) + [ast.literal_eval(constants["WASM_RUNTIME"])]
    return [Requirement(text) for text in stated]


def pins() -> list[tuple[str, Version, Marker | None]]:
    """(name, version, marker) for each line of the lock."""
    found = []
    for line in LOCK.read_text().splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        pin, _, marker = line.partition(";")
        name, _, version = pin.strip().partition("==")
        assert version, f"not a pin: {line!r}"
        found.append((re.sub(r"[-_.]+", "-", name).lower(), Version(version), Marker(marker) if marker.strip() else None))
    return found


@pytest.mark.parametrize("requirement", stated_requirements(), ids=str)
def test_every_stated_requirement_is_pinned_at_a_version_it_allows(requirement):
    name = re.sub(r"[-_.]+", "-", requirement.name).lower()
    for environment in ENVIRONMENTS:
        chosen = [version for pinned, version, marker in pins()
                  if pinned == name and (marker is None or marker.evaluate(environment))]
        assert len(chosen) == 1, f"{name} is pinned {len(chosen)} times for {environment} (python3 -m scripts.pins refresh)"
        assert requirement.specifier.contains(chosen[0], prereleases=True), (
            f"the lock pins {name}=={chosen[0]}, which {requirement} does not allow: python3 -m scripts.pins refresh")


def test_the_readme_installs_with_the_lock():
    commands = [line for line in (ROOT / "README.md").read_text().splitlines()
                if line.startswith("python3 -m venv ")]
    assert len(commands) == 2
    for command in commands:
        assert " -m pip install " in command and " -c requirements/lock.txt " in command, command
