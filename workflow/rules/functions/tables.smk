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
