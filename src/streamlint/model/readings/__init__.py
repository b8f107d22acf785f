"""Questions the rules ask of the solved model, after the analysis (no walking here)."""
