"""What a function does to streams and buffers, written down as a value (`FunctionSummary`),
the one way a caller takes it in (`apply`), and the one place that performs an effect on
a state (`perform`), shared by the interpreter and by `apply`."""
