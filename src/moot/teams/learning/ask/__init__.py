"""Asking: the question frame, recall, the specialist contract, the checker, the selection, the pipeline."""
