"""Build backend of the Python distribution: setuptools, refusing to build a wheel without the connector jar.

A wheel without ``versioned/jars/versioned-spark-assembly.jar`` would install cleanly and fail only when
Spark starts; building it is an error instead. Run ``bin/build-jar`` first.

Example::

    bin/build-jar && python3 -m pip install .
"""

from __future__ import annotations

import os
from typing import Any, Dict, Optional

from setuptools import build_meta as _setuptools
from setuptools.build_meta import *  # noqa: F401,F403  (the rest of the PEP 517 interface, unchanged)

_JAR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "python", "versioned", "jars",
                    "versioned-spark-assembly.jar")


def _require_jar() -> None:
    if not os.path.isfile(_JAR):
        raise SystemExit(
            f"versioned: {_JAR} is missing. The wheel bundles the Spark connector jar; build it first with "
            "bin/build-jar (needs a JDK 17 and Maven for the sbt launcher), then run pip install again.")


def build_wheel(wheel_directory: str, config_settings: Optional[Dict[str, Any]] = None,
                metadata_directory: Optional[str] = None) -> str:
    """PEP 517 ``build_wheel``: setuptools', after checking that the connector jar is there."""
    _require_jar()
    return _setuptools.build_wheel(wheel_directory, config_settings, metadata_directory)
