# Input function of the prefetch rule (prefetch.smk includes this file first).
# Kept apart from the rules: `snakemake --lint` flags a file that mixes rules and functions.

#: the rules that need the network; `snakemake prefetch` runs every job of theirs the config needs
NETWORK_RULES = (
    "download_germeval2019",
    "download_million_posts",
    "download_published",
    "reddit_ids",
    "rehydrate_reddit",
    "prefetch_model",
)


def prefetch_inputs():
    """Every file the network rules write for this config, i.e. its datasets' (and argue's reply corpus's) downloads,
    published splits and rehydrated Reddit texts, and its hub models' folders."""
    sources = {spec["source"] for spec in config["datasets"].values()}
    if config["adapt"]["enabled"] and adapt_reply_source():
        sources.add(AD_PROTOCOL["reply_source"])
    paths = [source_path(s) for s in sorted(sources)]
    paths += [hub_model_dir(m) for m in sorted(HUB_ENTRIES)]
    network = [workflow.get_rule(name) for name in NETWORK_RULES]
    return sorted(
        {p for p in paths if any(rule.is_producer(str(p)) for rule in network)}
    )
