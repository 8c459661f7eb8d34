"""Datasets: raw sources, split recipes, dataset builds, the demo's raw files, downloads, Reddit rehydration."""
