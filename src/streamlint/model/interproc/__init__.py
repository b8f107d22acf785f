"""Across functions: the program (modules and their functions by qualified name), and the
one solver that computes summaries per (function, calling context) on demand."""
