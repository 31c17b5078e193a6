"""Peers of the benchmark: Delta Lake and Apache Iceberg on the same data and workloads, run in their own virtual environment (runner.py)."""
