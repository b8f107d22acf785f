"""The stream model: one analysis per file that every rule queries."""
