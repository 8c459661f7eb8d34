"""Scoring: what computes scores beside the paper's per-split clustering (MTEB v2's protocol, the chance floors)."""
