"""The distribution: named versioned-spark, and no wheel is built without the connector jar."""

from __future__ import annotations

import importlib.util
import os

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _backend():
    spec = importlib.util.spec_from_file_location("versioned_build", os.path.join(ROOT, "build_backend",
                                                                                  "versioned_build.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_building_a_wheel_without_the_jar_fails_with_a_clear_message(tmp_path, monkeypatch) -> None:
    backend = _backend()
    monkeypatch.setattr(backend, "_JAR", str(tmp_path / "missing.jar"))
    with pytest.raises(SystemExit) as e:
        backend.build_wheel(str(tmp_path))
    assert "bin/build-jar" in str(e.value) and "missing" in str(e.value)


def test_the_distribution_name_is_not_the_unrelated_versioned_project() -> None:
    with open(os.path.join(ROOT, "pyproject.toml")) as f:
        text = f.read()
    assert 'name = "versioned-spark"' in text and 'versioned = "versioned.cli:main"' in text


def _pip_installs_of_the_package(script: str) -> list:
    """The ``pip install`` lines of a shell script that install the package itself (``.``)."""
    lines = [ln.split("#")[0] for ln in open(os.path.join(ROOT, script), encoding="utf-8").read().splitlines()]
    return [ln.split() for ln in lines if "pip install" in ln and " . " in f" {ln} "]


def test_the_demo_installs_the_package_with_its_dependencies() -> None:
    # the README's next command after bin/demo is `versioned --help`, which needs click and rich
    with open(os.path.join(ROOT, "pyproject.toml")) as f:
        dependencies = next(ln for ln in f if ln.startswith("dependencies"))
    assert '"click' in dependencies and '"rich' in dependencies and '"pyspark' in dependencies
    installs = _pip_installs_of_the_package("bin/demo")
    assert installs and any("--no-deps" not in words for words in installs), installs
