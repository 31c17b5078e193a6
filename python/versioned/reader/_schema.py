"""Spark schema JSON (``vc_tables.schema_json``) as Arrow types, and Spark's DDL text of a schema.

Example::

    >>> arrow_schema('{"type":"struct","fields":[{"name":"id","type":"long","nullable":false,"metadata":{}}]}')
    id: int64 not null
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any, Dict, List

if TYPE_CHECKING:
    import pyarrow as pa


def _primitive() -> Dict[str, "pa.DataType"]:
    import pyarrow as pa

    return {
        "long": pa.int64(), "integer": pa.int32(), "short": pa.int16(), "byte": pa.int8(), "string": pa.string(),
        "double": pa.float64(), "float": pa.float32(), "boolean": pa.bool_(), "date": pa.date32(),
        "timestamp": pa.timestamp("us", tz="UTC"), "timestamp_ntz": pa.timestamp("us"), "binary": pa.binary(),
        "null": pa.null(),
    }
_DDL = {"long": "BIGINT", "integer": "INT", "short": "SMALLINT", "byte": "TINYINT", "string": "STRING",
        "double": "DOUBLE", "float": "FLOAT", "boolean": "BOOLEAN", "date": "DATE", "timestamp": "TIMESTAMP",
        "timestamp_ntz": "TIMESTAMP_NTZ", "binary": "BINARY", "null": "VOID"}


def arrow_type(t: Any) -> "pa.DataType":
    """The Arrow type of one Spark JSON data type.

    Example::

        >>> arrow_type("decimal(10,2)")
        Decimal128Type(decimal128(10, 2))
    """
    import pyarrow as pa

    if isinstance(t, str):
        primitive = _primitive()
        if t in primitive:
            return primitive[t]
        m = re.fullmatch(r"decimal\((\d+),\s*(\d+)\)", t)
        if m:
            return pa.decimal128(int(m.group(1)), int(m.group(2)))
        if re.fullmatch(r"(var)?char\(\d+\)", t):
            return pa.string()
        raise ValueError(f"unknown Spark type {t!r}")
    kind = t.get("type")
    if kind == "struct":
        return pa.struct([field(f) for f in t["fields"]])
    if kind == "array":
        return pa.list_(pa.field("element", arrow_type(t["elementType"]), t.get("containsNull", True)))
    if kind == "map":
        return pa.map_(arrow_type(t["keyType"]), arrow_type(t["valueType"]))
    raise ValueError(f"unknown Spark type {t!r}")


def field(f: Dict[str, Any]) -> "pa.Field":
    """The Arrow field of one Spark ``StructField`` JSON object.

    Example::

        field({"name": "id", "type": "long", "nullable": False, "metadata": {}})
    """
    import pyarrow as pa

    return pa.field(f["name"], arrow_type(f["type"]), bool(f.get("nullable", True)))


def arrow_schema(schema_json: str) -> "pa.Schema":
    """The Arrow schema of a Spark ``StructType`` JSON text.

    Example::

        arrow_schema(table.schema_json)
    """
    import pyarrow as pa

    return pa.schema([field(f) for f in json.loads(schema_json)["fields"]])


def _ddl_type(t: Any) -> str:
    if isinstance(t, str):
        return _DDL.get(t, t.upper())
    kind = t.get("type")
    if kind == "struct":
        return "STRUCT<" + ", ".join(f"{_quote(f['name'])}: {_ddl_type(f['type'])}"
                                     + ("" if f.get("nullable", True) else " NOT NULL") for f in t["fields"]) + ">"
    if kind == "array":
        return f"ARRAY<{_ddl_type(t['elementType'])}>"
    if kind == "map":
        return f"MAP<{_ddl_type(t['keyType'])}, {_ddl_type(t['valueType'])}>"
    return str(t)


def _quote(name: str) -> str:
    return name if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name) else "`" + name.replace("`", "``") + "`"


def ddl(schema_json: str) -> str:
    """Spark's ``StructType.toDDL`` text of a schema JSON (as ``show`` prints it).

    Example::

        >>> ddl('{"type":"struct","fields":[{"name":"id","type":"long","nullable":false,"metadata":{}}]}')
        'id BIGINT NOT NULL'
    """
    fields: List[Dict[str, Any]] = json.loads(schema_json)["fields"]
    return ",".join(f"{_quote(f['name'])} {_ddl_type(f['type'])}" + ("" if f.get("nullable", True) else " NOT NULL")
                    for f in fields)
