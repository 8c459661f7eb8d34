# Reddit: the paper ships submission ids only; their texts are rehydrated through the official API
# with the user's own credentials (praw.ini or praw_* environment variables). Raw Reddit data stays
# in resources/reddit/ (design §6). Both rules need the network: they are local rules.


localrules:
    reddit_ids,
    rehydrate_reddit,


REDDIT = config["sources"].get("reddit") or {}


rule reddit_ids:
    """The paper's submission id list (URL + SHA-256, or a local copy), deduplicated."""
    input:
        **({"ids": REDDIT["ids_path"]} if REDDIT.get("ids_path") else {}),
    output:
        ids=REDDIT_IDS,
    log:
        shared_log("reddit", "ids.log"),
    conda:
        "../../envs/reddit.yaml"
    params:
        path=REDDIT.get("ids_path"),
        url=REDDIT.get("ids_url"),
        sha256=REDDIT.get("ids_sha256"),
    script:
        "../scripts/reddit_ids.py"


rule rehydrate_reddit:
    """Submissions through PRAW in batches of 100, checkpointed after each batch (resumable)."""
    input:
        ids=REDDIT_IDS,
    output:
        submissions=REDDIT_SUBMISSIONS,
        summary=REDDIT_SUMMARY,
    log:
        shared_log("reddit", "rehydrate.log"),
    benchmark:
        shared_log("reddit", "rehydrate.benchmark.tsv")
    conda:
        "../../envs/reddit.yaml"
    params:
        checkpoint=REDDIT_CHECKPOINT,
        settings={
            k: REDDIT[k]
            for k in (
                "praw_site",
                "user_agent",
                "oauth_url",
                "reddit_url",
                "max_retries",
                "backoff_seconds",
            )
            if REDDIT.get(k) is not None
        },
    script:
        "../scripts/rehydrate_reddit.py"
