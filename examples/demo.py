"""A five-minute tour of versioned on the embedded default (local warehouse + SQLite metastore).

Creates a repository, commits several versions of a table, branches and tags, reads old versions
back and prints what changed between them.  Run with ``bin/demo``.
"""
import shutil
import sys
import tempfile

from pyspark.sql import SparkSession

import versioned


def main() -> None:
    warehouse = tempfile.mkdtemp(prefix="versioned-demo-")
    spark = (versioned.configure_spark_with_versioned(
        SparkSession.builder.master("local[2]").appName("versioned-demo")
        .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "4"),
        warehouse=warehouse).getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    versioned.install()
    try:
        tour(spark)
    finally:
        spark.stop()
        shutil.rmtree(warehouse, ignore_errors=True)


def tour(spark: SparkSession) -> None:
    repo = versioned.Repository(spark, "shop")

    print("\n== 1. first commit: a SNAP of 5 products")
    products = spark.createDataFrame(
        [(1, "apple", 0.50), (2, "banana", 0.25), (3, "cherry", 3.00), (4, "date", 2.10), (5, "elderberry", 4.75)],
        "id long, name string, price double")
    products.write.versioned("shop.products", primary_key="id", message="initial catalogue", author="demo")
    # The branch every write and read without a branch uses: the repository's default, whatever its name.
    main = repo.default_branch
    repo.create_tag("v1", main)

    print("== 2. an append and an upsert: DIFF commits")
    spark.createDataFrame([(6, "fig", 1.20)], "id long, name string, price double") \
        .write.versioned("shop.products", message="add fig", author="demo")
    spark.createDataFrame([(3, "cherry", 2.50), (7, "grape", 1.80)], "id long, name string, price double") \
        .write.versioned("shop.products", upsert=True, message="cherry sale, add grape", author="demo")

    print("== 3. a delete by condition, then a branch for an experiment")
    repo.delete_where("products", "price > 4", message="drop luxury items", author="demo")
    repo.create_branch("pricing", main)
    spark.read.versioned("shop.products", ref="pricing").selectExpr("id", "name", "round(price * 1.1, 2) AS price") \
        .write.versioned("shop.products", branch="pricing", mode="overwrite", message="+10% prices", author="demo")

    print(f"\n== history of {main}")
    repo.log(main).select("hash", "message", "tables_changed").show(truncate=False)

    print(f"== {main} today")
    spark.read.versioned("shop.products").orderBy("id").show()
    print(f"== {main} at tag v1 (time travel)")
    spark.read.versioned("shop.products", ref="v1").orderBy("id").show()
    print(f"== {main} two commits ago ({main}~2)")
    spark.read.versioned("shop.products", ref=f"{main}~2").orderBy("id").show()

    print(f"== what changed from v1 to {main}")
    repo.diff("products", "v1", main).orderBy("id").show(truncate=False)
    print(f"== what the pricing branch changed against {main}")
    repo.diff("products", main, "pricing").orderBy("id").show(truncate=False)

    head = repo.resolve(main)
    print(f"{main} is at image {head[:12]}; v1 is at {repo.resolve('v1')[:12]}; branches:")
    repo.branches().select("name", "image").show(truncate=False)


if __name__ == "__main__":
    sys.exit(main())
