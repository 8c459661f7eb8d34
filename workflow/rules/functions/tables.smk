# Report items of the rules in tables.smk, which includes this file first.
# Kept apart from the rules: `snakemake --lint` flags a file that mixes rules and functions.


def table_report(stem):
    """The HTML rendering of a table, as a report item with its caption."""
    return report(
        table_path(stem, "html"),
        caption=f"../report/{stem.replace('_vs_paper', '')}.rst",
        category="Tables",
        subcategory="beside the paper" if stem.endswith("_vs_paper") else "this run",
        labels={"table": stem},
    )


def chance_path(dataset):
    """The random-partition scores of a dataset (rule chance)."""
    return result("chance", f"{dataset}.parquet")


def chance_inputs(wildcards):
    """The chance file of every dataset when tables.chance is on."""
    if not config["tables"]["chance"]["enabled"]:
        return []
    return [chance_path(d) for d in DATASETS]


def chance_mteb_v2_path(dataset):
    """The MTEB v2 protocol on random vectors for a dataset (rule chance_mteb_v2)."""
    return result("chance", f"{dataset}.mteb_v2.parquet")


def chance_mteb_v2_inputs(wildcards):
    """The v2 chance file of every dataset when tables.chance is on (read by the mteb_v2_table rule)."""
    if not config["tables"]["chance"]["enabled"]:
        return []
    return [chance_mteb_v2_path(d) for d in DATASETS]
