"""Adaptation: training embeddings that cluster better (WWM, TSDAE and the clustering-oriented methods)."""
