"""What the clusters are: clusters vs gold labels of one split, with each cluster's top terms (issue 15.6).

- :func:`confusion`: a clusters x gold-labels count table (clusters by size, labels by frequency).
- :func:`ctfidf`: class-based TF-IDF as BERTopic defines it (``ClassTfidfTransformer``): the texts of a cluster
  are one document; term frequency per cluster, L1-normalised, weighted by ``log(1 + A / f_t)`` with ``A`` the
  average number of words per cluster and ``f_t`` the frequency of term ``t`` over all clusters.
- :func:`render`: one standalone HTML page per (model, dataset) for the Snakemake report.

Inputs are the predicted labels the cluster jobs save (``split, text_id, cluster``), the dataset's splits and
texts. No function reads the config.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape

import numpy as np
import pandas as pd

# Frequent German (and a few English) function words, left out of the top terms; c-TF-IDF down-weights words
# common to all clusters anyway, but with few clusters they can still surface.
GERMAN_STOP_WORDS = frozenset(
    """
aber alle allem allen aller alles als also am an ander andere anderem anderen anderer anderes auch auf aus bei bin
bis bist da damit dann das dass dein deine dem den denn der des dich die dies diese diesem diesen dieser dieses dir
doch dort du durch ein eine einem einen einer eines einige er es etwas euch euer für gegen gewesen hab habe haben
hat hatte hatten hier hin hinter ich ihm ihn ihnen ihr ihre ihrem ihren ihrer im in indem ins ist jede jedem jeden
jeder jedes jetzt kann kein keine können könnte man manche mein meine mich mir mit muss musste nach nicht nichts
noch nun nur ob oder ohne sehr sein seine seinem seinen seiner sich sie sind so solche soll sollte sondern sonst
über um und uns unser unter viel vom von vor während war waren warum was weil welche wenn wer werde werden wie
wieder will wir wird wo wollen wurde wurden zu zum zur zwar zwischen the and of to in is for on that with
""".split()
)
TOKEN_PATTERN = r"(?u)\b[^\W\d_]{2,}\b"  # words of 2+ letters (no numbers)


def choose_split(splits: pd.DataFrame, which: int | str) -> int:
    """The split to show: ``"largest"`` (most rows; ties: the lowest id), ``"first"`` (the lowest id), or a
    split id (an unknown one raises, naming the available ids). Used by the cluster views and the figures."""
    sizes = splits.groupby("split").size()
    if which == "largest":
        return int(sizes[sizes == sizes.max()].index.min())
    if which == "first":
        return int(sizes.index.min())
    which = int(which)
    if which not in sizes.index:
        raise ValueError(
            f"no split {which}: split {which} not among the dataset's splits {sorted(map(int, sizes.index))}"
        )
    return which


def confusion(gold: Sequence, clusters: Sequence) -> pd.DataFrame:
    """Counts of (cluster, gold label); rows = clusters by size (largest first), columns = labels by frequency."""
    df = pd.DataFrame({"cluster": np.asarray(clusters), "label": np.asarray(gold, dtype=object)})
    table = pd.crosstab(df.cluster, df.label)
    rows = df.cluster.value_counts().sort_index(kind="stable").sort_values(ascending=False, kind="stable").index
    cols = df.label.value_counts().sort_index(kind="stable").sort_values(ascending=False, kind="stable").index
    return table.reindex(index=rows, columns=cols)


def ctfidf(
    docs_by_cluster: Mapping, top_n: int = 10, stop_words=GERMAN_STOP_WORDS, token_pattern: str = TOKEN_PATTERN
) -> dict:
    """Top ``top_n`` terms ``[(term, weight)]`` per cluster by c-TF-IDF (BERTopic's ``ClassTfidfTransformer``).

    ``docs_by_cluster``: cluster -> its texts. Terms are lower-cased words; ``stop_words`` are left out. Ties are
    broken by the term (alphabetically), so the result is deterministic.
    """
    from sklearn.feature_extraction.text import CountVectorizer

    keys = list(docs_by_cluster)
    joined = [" ".join(map(str, docs_by_cluster[k])) for k in keys]
    vectorizer = CountVectorizer(
        token_pattern=token_pattern, lowercase=True, stop_words=sorted(stop_words) if stop_words else None
    )
    try:
        counts = vectorizer.fit_transform(joined).toarray().astype(float)
    except ValueError:  # no term at all
        return {k: [] for k in keys}
    terms = vectorizer.get_feature_names_out()
    f_t = counts.sum(axis=0)
    avg_words = int(counts.sum(axis=1).mean())  # BERTopic: int(X.sum(axis=1).mean())
    idf = np.log(avg_words / f_t + 1)
    row_sums = counts.sum(axis=1, keepdims=True)
    tf = np.divide(counts, row_sums, out=np.zeros_like(counts), where=row_sums > 0)
    weights = tf * idf
    out = {}
    for i, k in enumerate(keys):
        order = sorted(np.flatnonzero(weights[i]), key=lambda j: (-weights[i, j], terms[j]))[:top_n]
        out[k] = [(str(terms[j]), float(weights[i, j])) for j in order]
    return out


def cluster_view(
    texts: pd.DataFrame, splits: pd.DataFrame, labels: pd.DataFrame, split: int | str = "largest", top_n: int = 8
) -> dict:
    """The pieces of one (model, dataset, configuration)'s view: the chosen split, its confusion table, each
    cluster's top terms, size and majority label. ``labels``: the saved predictions (``split, text_id, cluster``;
    with a ``state`` column, ``scoring.restarts`` > 1: state 0's, the seed's run)."""
    from tecb.cluster.metrics import score

    if "state" in labels:
        labels = labels[labels["state"] == 0]
    s = choose_split(splits, split)
    gold = splits[splits["split"] == s][["text_id", "label"]]
    pred = labels[labels["split"] == s][["text_id", "cluster"]]
    if pred.empty:
        raise ValueError(f"the labels file has no predictions for split {s}")
    # rows in split order on both sides (a text may occur twice in a split: align by position, not by id)
    if len(pred) != len(gold) or not np.array_equal(pred.text_id.to_numpy(), gold.text_id.to_numpy()):
        raise ValueError(f"split {s}: the predicted labels do not match the split's rows (text_id, order)")
    both = pd.DataFrame(
        {"text_id": gold.text_id.to_numpy(), "label": gold.label.to_numpy(), "cluster": pred.cluster.to_numpy()}
    )
    table = confusion(both.label, both.cluster)
    text_of = texts.set_index("text_id")["text"]
    docs = {c: text_of.loc[g.text_id].tolist() for c, g in both.groupby("cluster", sort=False)}
    terms = ctfidf({c: docs[c] for c in table.index}, top_n=top_n)
    return {"split": s, "confusion": table, "terms": terms, "scores": score(both.label, both.cluster)}


def render(view: dict, title: str, note: str = "") -> str:
    """A standalone HTML page: the split's scores, then one row per cluster (size, majority label and its share,
    top terms) with the counts per gold label, shaded by the row's share."""
    table: pd.DataFrame = view["confusion"]
    sc = view["scores"]
    head = "".join(f"<th>{escape(str(c))}</th>" for c in table.columns)
    body = []
    for c, row in table.iterrows():
        n = int(row.sum())
        top = row.idxmax()
        cells = "".join(
            f'<td style="background:rgba(31,119,180,{v / n if n else 0:.2f})">{int(v) if v else ""}</td>' for v in row
        )
        words = ", ".join(escape(t) for t, _ in view["terms"].get(c, [])) or "&ndash;"
        label = "noise" if c == -1 else f"cluster {c}"
        body.append(
            f"<tr><th>{label}</th><td>{n}</td><td>{escape(str(top))} ({row.max() / n:.0%})</td>"
            f"<td class='terms'>{words}</td>{cells}</tr>"
        )
    style = (
        "<style>body{font-family:sans-serif;font-size:13px}table{border-collapse:collapse}"
        "td,th{padding:2px 6px;border-bottom:1px solid #ddd;text-align:right}td.terms{text-align:left;"
        "max-width:28em}th{text-align:left}</style>"
    )
    summary = (
        f"Split {view['split']}: {sc['n_texts']} texts, {sc['n_labels']} gold labels, {sc['n_clusters']} "
        f"clusters; V-measure {sc['v_measure']:.4f} (homogeneity {sc['homogeneity']:.4f}, completeness "
        f"{sc['completeness']:.4f}), AMI {sc['ami']:.4f}."
    )
    return (
        f"<!DOCTYPE html>\n<html><head><meta charset='utf-8'>{style}</head><body>\n<h3>{escape(title)}</h3>\n"
        f"<p>{escape(summary)}</p>\n"
        + (f"<p>{escape(note)}</p>\n" if note else "")
        + "<table>\n<tr><th></th><th>size</th><th>majority label</th><th>top terms (c-TF-IDF)</th>"
        + head
        + "</tr>\n"
        + "\n".join(body)
        + "\n</table>\n</body></html>\n"
    )


def write_view(
    texts_path,
    splits_path,
    labels_path,
    out_path,
    *,
    title: str,
    split: int | str = "largest",
    top_n: int = 8,
    log=print,
) -> None:
    """Read the files, build :func:`cluster_view` and write :func:`render`'s page to ``out_path``."""
    from tecb.io import write_text

    view = cluster_view(
        pd.read_parquet(texts_path),
        pd.read_parquet(splits_path),
        pd.read_parquet(labels_path),
        split=split,
        top_n=top_n,
    )
    note = (
        "Rows: predicted clusters (largest first); columns: gold labels (most frequent first); cells: texts; "
        "shading: the share of the cluster's texts. Top terms: class-based TF-IDF (BERTopic's c-TF-IDF) of "
        "the cluster's texts, German stop words left out."
    )
    write_text(render(view, title, note), out_path)
    log(f"{title}: split {view['split']}, {len(view['confusion'])} clusters -> {out_path}")


def batch_step(
    texts_path, splits_path, labels_path, out_path, *, title: str, split: int | str, top_n: int, log=print
) -> dict:
    """:func:`write_view` as a step of the (model, dataset)'s ``cluster_batch`` job
    (:func:`tecb.cluster.batch.run_batch`), after the clustering whose labels it shows: the same page, without a
    process of its own."""
    return {
        "name": "cluster_view",
        "spec": {"title": title, "split": split, "top_n": top_n},
        "inputs": [texts_path, splits_path, labels_path],
        "outputs": [out_path],
        "libraries": ("numpy", "pandas", "scikit-learn"),
        "compute": lambda: write_view(
            texts_path, splits_path, labels_path, out_path, title=title, split=split, top_n=top_n, log=log
        ),
    }
