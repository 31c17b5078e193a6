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
